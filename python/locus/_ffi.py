"""The C declarations of include/locus.h that the package uses, for ctypes and NumPy.

Structs are mirrored twice: as ctypes structures (options, ranges, stats) and as NumPy dtypes with
the header's offsets (positions, events), so that polls write straight into NumPy arrays. The sizes
are checked against the header's pinned sizes at import.
"""
import ctypes as C

import numpy as np

ID_CAPACITY = 64
REJECTED_CAPACITY = 8
NUL_TERMINATED = C.c_size_t(-1).value

FILTERS = {"kalman": 0, "none": 1}
COUPLINGS = {"tight": 0, "loose": 1}
MODES = {"auto": 0, "planar": 1, "spatial": 2}
OPTION_SMOOTH, OPTION_TAG_OFFSET_ON, OPTION_TAG_OFFSET_OFF = 1, 2, 4
EVENT_KINDS = ("exit", "enter", "dwell")
#: enum locus_skip_reason, in order: the keys of `locus replay --json`'s "skipped".
SKIP_REASONS = ("missing_field", "unparseable_number", "invalid_anchor", "unknown_anchor", "unknown_floor",
                "non_finite", "negative_range", "time_backwards", "clock_jump", "range_too_long",
                "late_range", "future_time", "tag_limit", "invalid_tag",
                "same_locator", "difference_too_long")


class Options(C.Structure):
    """struct locus_options."""
    _fields_ = [("rate_hz", C.c_double), ("sigma_m", C.c_double), ("default_floor", C.c_char_p),
                ("filter", C.c_int32), ("coupling", C.c_int32), ("mode", C.c_int32), ("flags", C.c_uint32)]


class Stats(C.Structure):
    """struct locus_stats."""
    _fields_ = [(name, C.c_int64) for name in ("ranges_accepted", "ranges_skipped", "epochs", "epochs_failed",
                                               "epochs_before_track", "rejected_ranges", "pending_positions",
                                               "pending_events")]


#: struct locus_range (the pointers as addresses).
RANGE_DTYPE = np.dtype({"names": ["t_s", "range_m", "tag", "floor", "anchor"],
                        "formats": ["<f8", "<f8", "<u8", "<u8", "<u2"],
                        "offsets": [0, 8, 16, 24, 32], "itemsize": 40})

#: struct locus_difference (ABI 0.2): a range difference (TDoA), tdoa_m = d(tag, B) - d(tag, A).
DIFFERENCE_DTYPE = np.dtype({"names": ["t_s", "tdoa_m", "tag", "floor", "anchor_a", "anchor_b"],
                             "formats": ["<f8", "<f8", "<u8", "<u8", "<u2", "<u2"],
                             "offsets": [0, 8, 16, 24, 32, 34], "itemsize": 40})

#: struct locus_position.
POSITION_DTYPE = np.dtype({
    "names": ["t_s", "x_m", "y_m", "z_m", "vx_mps", "vy_mps", "vz_mps", "speed_mps", "course_rad", "covariance_m2",
              "accuracy_m", "accuracy95_m", "hdop", "vdop", "pdop", "residual_rms_m", "flags", "anchors_used",
              "rejected_count", "rejected", "tag", "floor"],
    "formats": ["<f8"] * 9 + [("<f8", (6,))] + ["<f8"] * 6 + ["<i4"] * 3 + [("<u2", (REJECTED_CAPACITY,)),
                                                                             f"S{ID_CAPACITY}", f"S{ID_CAPACITY}"],
    "offsets": [0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 120, 128, 136, 144, 152, 160, 168, 172, 176, 180, 196, 260],
    "itemsize": 328})

#: struct locus_event.
EVENT_DTYPE = np.dtype({"names": ["t_s", "dwell_s", "kind", "tag", "floor", "zone"],
                        "formats": ["<f8", "<f8", "<i4", f"S{ID_CAPACITY}", f"S{ID_CAPACITY}", f"S{ID_CAPACITY}"],
                        "offsets": [0, 8, 16, 20, 84, 148], "itemsize": 216})

for _name, _size, _pinned in (("locus_options", C.sizeof(Options), 40), ("locus_stats", C.sizeof(Stats), 64),
                              ("locus_range", RANGE_DTYPE.itemsize, 40),
                              ("locus_difference", DIFFERENCE_DTYPE.itemsize, 40),
                              ("locus_position", POSITION_DTYPE.itemsize, 328),
                              ("locus_event", EVENT_DTYPE.itemsize, 216)):
    assert _size == _pinned, f"{_name}: {_size} bytes, locus.h says {_pinned}"


class ReplayRequest(C.Structure):
    """struct locus_replay_request."""
    _fields_ = [("site_path", C.c_char_p), ("trace_path", C.c_char_p), ("truth_path", C.c_char_p),
                ("positions_path", C.c_char_p), ("events_path", C.c_char_p), ("report_path", C.c_char_p),
                ("zone_window_s", C.c_double), ("truth_shift_s", C.c_double), ("flags", C.c_uint32), ("jobs", C.c_uint32)]


class GeometryRequest(C.Structure):
    """struct locus_geometry_request."""
    _fields_ = [("site_path", C.c_char_p), ("floor", C.c_char_p), ("svg_path", C.c_char_p), ("trace_path", C.c_char_p),
                ("grid_m", C.c_double), ("max_range_m", C.c_double), ("accuracy_sigma_m", C.c_double),
                ("flags", C.c_uint32), ("reserved", C.c_uint32)]


class CalibrateRequest(C.Structure):
    """struct locus_calibrate_request."""
    _fields_ = [("site_path", C.c_char_p), ("trace_path", C.c_char_p), ("truth_path", C.c_char_p), ("out_path", C.c_char_p),
                ("floor", C.c_char_p), ("estimator", C.c_int32), ("height", C.c_int32), ("min_samples", C.c_int64),
                ("flags", C.c_uint32), ("holdout_block_ms", C.c_uint32)]


REPLAY_TRUTH_SHIFT, REPLAY_TRUTH_SHIFT_AUTO = 1, 2
GEOMETRY_SUGGEST, GEOMETRY_KERNEL, GEOMETRY_TDOA = 1, 2, 4
CALIBRATE_SLOPE, CALIBRATE_FIX_POSITIONS, CALIBRATE_NO_HOLDOUT = 1, 2, 4
ESTIMATORS = {None: 0, "tukey": 1, "huber": 2, "median": 3}
HEIGHTS = {None: 0, "auto": 0, "floor": 1, "truth": 2}
text_p = C.POINTER(C.c_void_p)
for _name, _size, _pinned in (("locus_replay_request", C.sizeof(ReplayRequest), 72),
                              ("locus_geometry_request", C.sizeof(GeometryRequest), 64),
                              ("locus_calibrate_request", C.sizeof(CalibrateRequest), 64)):
    assert _size == _pinned, f"{_name}: {_size} bytes, locus.h says {_pinned}"


def declare(lib):
    """Declares the argument and result types of the functions used on the loaded library `lib`."""
    engine = C.c_void_p
    size_p = C.POINTER(C.c_size_t)
    lib.locus_version.restype = C.c_char_p
    lib.locus_version.argtypes = []
    lib.locus_status_name.restype = C.c_char_p
    lib.locus_status_name.argtypes = [C.c_int]
    lib.locus_last_error_code.restype = C.c_int
    lib.locus_last_error_code.argtypes = []
    lib.locus_last_error_message.restype = C.c_size_t
    lib.locus_last_error_message.argtypes = [C.c_char_p, C.c_size_t]
    lib.locus_positions_csv_header.restype = C.c_char_p
    lib.locus_positions_csv_header.argtypes = []
    for name, args in (
        ("locus_engine_create_json", [C.c_char_p, C.c_size_t, C.POINTER(Options), C.POINTER(engine)]),
        ("locus_engine_create_file", [C.c_char_p, C.POINTER(Options), C.POINTER(engine)]),
        ("locus_engine_destroy", [engine]),
        ("locus_engine_push_ranges", [engine, C.c_void_p, C.c_size_t, size_p]),
        ("locus_engine_push_differences", [engine, C.c_void_p, C.c_size_t, size_p]),
        ("locus_engine_push_trace_file", [engine, C.c_char_p, size_p, size_p]),
        ("locus_engine_advance", [engine, C.c_double]),
        ("locus_engine_finish", [engine]),
        ("locus_engine_poll_positions", [engine, C.c_void_p, C.c_size_t, size_p]),
        ("locus_engine_poll_events", [engine, C.c_void_p, C.c_size_t, size_p]),
        ("locus_engine_stats", [engine, C.POINTER(Stats)]),
        ("locus_engine_skipped", [engine, C.POINTER(C.c_int64), C.c_size_t]),
        ("locus_engine_set_partition", [engine, C.c_size_t, C.c_size_t]),
        ("locus_engine_tag_index", [engine, C.c_char_p, C.POINTER(C.c_int64)]),
        ("locus_event_to_json", [C.c_void_p, C.c_char_p, C.c_size_t, size_p]),
        ("locus_engine_set_truth", [engine, C.c_char_p, C.c_double]),
        ("locus_engine_summary", [engine, text_p, text_p, C.POINTER(C.c_int)]),
        ("locus_replay_file", [C.POINTER(ReplayRequest), C.POINTER(Options), text_p, text_p, C.POINTER(C.c_int)]),
        ("locus_geometry", [C.POINTER(GeometryRequest), text_p]),
        ("locus_calibrate_file", [C.POINTER(CalibrateRequest), text_p, text_p, C.POINTER(C.c_int)]),
        ("locus_merge_positions", [C.POINTER(C.c_void_p), C.POINTER(C.c_void_p), C.POINTER(C.c_size_t), C.c_size_t, size_p, size_p]),
        ("locus_merge_events", [C.POINTER(C.c_void_p), C.POINTER(C.c_size_t), C.c_size_t, size_p, size_p]),
        ("locus_merge_summaries", [C.POINTER(C.c_char_p), C.c_size_t, text_p]),
        ("locus_position_to_csv", [C.c_void_p, C.c_char_p, C.c_size_t, size_p]),
    ):
        function = getattr(lib, name)
        function.argtypes = args
        function.restype = C.c_int
    lib.locus_free.argtypes = [C.c_void_p]
    lib.locus_free.restype = None
    return lib
