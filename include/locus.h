/*
 * locus.h — the C interface of Locus (liblocus.so): UWB ranges in, positions and zone events out.
 *
 * One header, plain C99 (also valid C++). No Swift type appears here: engines are opaque handles,
 * every other value is a plain struct, a number or a NUL-terminated UTF-8 string.
 *
 * STATUS AND ERRORS
 *   Every function that can fail returns an int status: LOCUS_OK (0) or a code of enum locus_status,
 *   which mirrors the library's stable error codes (E3104 -> 3104; table in docs/errors.md). On
 *   failure the calling thread's last error is set (locus_last_error_code, locus_last_error_message);
 *   a successful call leaves it unchanged. No input makes the library abort the host process: null
 *   pointers, invalid JSON, unknown floors, NaN ranges, buffers too small and calls on a destroyed
 *   engine are reported as statuses. (Pointers to memory that is not what the header says cannot be
 *   detected: pass valid, NUL-terminated strings and arrays of at least the given length.)
 *
 * OWNERSHIP
 *   locus_engine_create_* allocate an engine; the caller owns it and releases it with exactly one
 *   locus_engine_destroy. The library keeps no pointer the caller passed in after a call returns
 *   (strings are copied). Every output goes into caller-owned memory (structs, arrays, char
 *   buffers). Strings returned as `const char *` (locus_version, locus_status_name) are static.
 *
 * THREAD SAFETY
 *   All functions may be called from any thread. Calls on one engine are serialised by a lock inside
 *   the engine (they never run concurrently); different engines run in parallel. Destroying an engine
 *   while another thread is inside a call on it is safe (the engine is freed when that call returns),
 *   but every later call with the handle returns LOCUS_E_CALL_ORDER. The last error is per thread.
 *
 * DETERMINISM
 *   Positions and events depend on the ranges alone (their timestamps), never on how they were
 *   batched or when they were polled: the same ranges give the same output as `locus replay`.
 *
 * UNITS
 *   metres (_m), seconds (_s), radians (_rad), square metres (_m2), metres per second (_mps).
 */
#ifndef LOCUS_H
#define LOCUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- version */

#define LOCUS_VERSION_MAJOR 0
#define LOCUS_VERSION_MINOR 3
#define LOCUS_VERSION_PATCH 0
/** The library version as text; equal to locus_version() and to `locus --version`. */
#define LOCUS_VERSION "0.3.0"

/** The version of the loaded library, e.g. "0.3.0" (a static string). */
const char *locus_version(void);

/* ---------------------------------------------------------------- status */

/** Status codes: 0 or the number of the library's error code (E3104 -> 3104). Stable. */
typedef enum locus_status {
    LOCUS_OK = 0,
    /* E1xxx set-up and call order */
    LOCUS_E_USAGE = 1001,                  /* usage error */
    LOCUS_E_CALL_ORDER = 1002,             /* wrong state: destroyed handle, engine finished, time going backwards */
    LOCUS_E_INVALID_ARGUMENT = 1003,       /* null pointer, out-of-domain value, buffer too small, id too long,
                                              a range to a locator the floor does not have */
    /* E3xxx floor and site configuration */
    LOCUS_E_NO_FLOOR_MAP = 3001,
    LOCUS_E_UNKNOWN_FLOOR = 3002,          /* a floor id the site does not have */
    LOCUS_E_SITE_MISSING_FIELD = 3101,
    LOCUS_E_SITE_WRONG_TYPE = 3102,
    LOCUS_E_SITE_DUPLICATE_ID = 3103,
    LOCUS_E_SITE_DUPLICATE_ADDRESS = 3104,
    LOCUS_E_SITE_NON_FINITE_NUMBER = 3105,
    LOCUS_E_SITE_NEGATIVE_VALUE = 3106,
    LOCUS_E_SITE_NO_FLOOR = 3107,
    LOCUS_E_POLYGON_TOO_FEW_VERTICES = 3108,
    LOCUS_E_POLYGON_SELF_INTERSECTING = 3109,
    LOCUS_E_POLYGON_ZERO_AREA = 3110,
    LOCUS_E_INVALID_LOCATOR_ADDRESS = 3111,
    LOCUS_E_SITE_VALUE_OUT_OF_RANGE = 3112,
    /* E4xxx positioning at run time */
    LOCUS_E_TOO_FEW_RANGES = 4001,         /* 3 planar, 4 spatial */
    LOCUS_E_DEGENERATE_GEOMETRY = 4002,    /* collinear, coplanar or coincident locators */
    LOCUS_E_INVALID_RANGE = 4003,          /* a range or time that is negative, NaN or infinite */
    LOCUS_E_SOLVER_DIVERGED = 4004,
    LOCUS_E_FILTER_DIVERGENCE = 4005,
    /* E5xxx I/O and data */
    LOCUS_E_FILE_UNREADABLE = 5001,
    LOCUS_E_MALFORMED_JSON = 5002,
    LOCUS_E_CSV_MISSING_COLUMN = 5003,
    LOCUS_E_MALFORMED_CSV = 5004,
    LOCUS_E_FILE_UNWRITABLE = 5005,
    LOCUS_E_UNDELIVERED_POSITIONS = 5006,
    LOCUS_E_LAPACK_INTERNAL = 5101
} locus_status;

/** The code's name: "OK", "E3104", ... or "unknown" (a static string). */
const char *locus_status_name(int status);

/** The status of the last failed call on this thread (LOCUS_OK when none failed yet). */
int locus_last_error_code(void);

/**
 * Copies the message of the last failed call on this thread (e.g.
 * "<json>:3:14: malformed JSON: ... [E5002]"; empty when none) into buffer, truncated and
 * NUL-terminated when capacity > 0. Returns the message length in bytes without the NUL, as
 * snprintf does: the message was truncated when the result is >= capacity. buffer may be NULL when
 * capacity is 0.
 */
size_t locus_last_error_message(char *buffer, size_t capacity);

/* ---------------------------------------------------------------- plain structs */

/** Capacity of the id fields (tag, floor, zone): ids are at most 63 bytes of UTF-8 plus the NUL. */
#define LOCUS_ID_CAPACITY 64
/** Rejected locators listed in a position (further ones are only counted). */
#define LOCUS_REJECTED_CAPACITY 8
/** Pass as `length` for a NUL-terminated text. */
#define LOCUS_NUL_TERMINATED ((size_t)-1)

enum locus_filter { LOCUS_FILTER_KALMAN = 0, LOCUS_FILTER_NONE = 1 };
enum locus_coupling { LOCUS_COUPLING_TIGHT = 0, LOCUS_COUPLING_LOOSE = 1 };
enum locus_mode { LOCUS_MODE_AUTO = 0, LOCUS_MODE_PLANAR = 1, LOCUS_MODE_SPATIAL = 2 };
/** Bits of locus_options.flags. */
enum locus_option_flag {
    LOCUS_OPTION_SMOOTH = 1,         /* positions smoothed offline over the whole stream (`locus replay --smooth`):
                                        held until locus_engine_finish, then released smoothed; events stay causal */
    LOCUS_OPTION_TAG_OFFSET_ON = 2,  /* estimate a per-tag range offset on every planar floor (`--tag-offset on`) */
    LOCUS_OPTION_TAG_OFFSET_OFF = 4  /* never (`--tag-offset off`); neither bit: on uncalibrated planar floors */
};

/**
 * Engine options. All zeros (`locus_options o = {0};`, or NULL) means the defaults of `locus replay`:
 * 4 Hz, sigma 0.1 m, the site's first floor, the causal Kalman filter, tight coupling, automatic mode,
 * the per-tag range offset on uncalibrated planar floors, no smoothing. The same options give the same
 * bytes as `locus replay` with the same command-line options.
 */
typedef struct locus_options {
    double rate_hz;            /* output rate per tag, Hz, in [0.001, 1000]; 0: 4 Hz */
    double sigma_m;            /* range noise sigma assumed by solver and filter, m, in [1e-6, 100]; 0: 0.1 m */
    const char *default_floor; /* floor for ranges that name none; NULL: the site's first floor */
    int32_t filter;            /* enum locus_filter */
    int32_t coupling;          /* enum locus_coupling (filter only) */
    int32_t mode;              /* enum locus_mode */
    uint32_t flags;            /* enum locus_option_flag bits (0: none); unknown bits are an error */
} locus_options;

/** One range measurement (a row of trace.csv). */
typedef struct locus_range {
    double t_s;                /* measurement time, s (the data's clock) */
    double range_m;            /* measured tag-locator distance, m (the locator's biasM is taken out) */
    const char *tag;           /* tag id, UTF-8, 1-63 bytes; NULL: "tag" */
    const char *floor;         /* floor id; NULL: the default floor */
    uint16_t anchor;           /* the locator's 16-bit address */
} locus_range;

/**
 * One range difference (TDoA, SPEC section 2 difference rows): tdoa_m = d(tag, B) - d(tag, A), metres,
 * with A = anchor_a the reference locator. Clock synchronisation between locators is the
 * infrastructure's: the difference arrives formed (c * (t_B - t_A)). Since ABI 0.2.
 */
typedef struct locus_difference {
    double t_s;                /* measurement time, s (the data's clock) */
    double tdoa_m;             /* d(tag, B) - d(tag, A), m (the locators' biasM are taken out: b_B - b_A) */
    const char *tag;           /* tag id, UTF-8, 1-63 bytes; NULL: "tag" */
    const char *floor;         /* floor id; NULL: the default floor */
    uint16_t anchor_a;         /* A, the reference locator's 16-bit address */
    uint16_t anchor_b;         /* B, the other locator's address (!= A) */
} locus_difference;

enum locus_position_flags {
    LOCUS_POSITION_HAS_VELOCITY = 1, /* vx, vy, vz, speed are set (filtered fixes) */
    LOCUS_POSITION_HAS_COURSE = 2,   /* course_rad is set (moving at >= 5 cm/s) */
    LOCUS_POSITION_HAS_VDOP = 4      /* vdop is set (spatial solving) */
};

/** One position fix. Unset fields (see flags) are 0. Every number is finite. */
typedef struct locus_position {
    double t_s;                 /* fix time, s */
    double x_m, y_m, z_m;       /* position in the floor frame, m (planar: z = the floor's tag height) */
    double vx_mps, vy_mps, vz_mps; /* velocity, m/s */
    double speed_mps;           /* sqrt(vx^2 + vy^2), m/s */
    double course_rad;          /* atan2(vy, vx), rad, in (-pi, pi] */
    double covariance_m2[6];    /* position covariance, m^2: xx, xy, xz, yy, yz, zz */
    double accuracy_m;          /* DRMS sqrt(sxx + syy), m */
    double accuracy95_m;        /* 95 % horizontal radius, m */
    double hdop, vdop, pdop;    /* dilution of precision */
    double residual_rms_m;      /* RMS of the used ranges' residuals, m */
    int32_t flags;              /* enum locus_position_flags */
    int32_t anchors_used;       /* locators whose ranges entered the fix */
    int32_t rejected_count;     /* locators rejected as outliers (NLOS), may exceed the list */
    uint16_t rejected[LOCUS_REJECTED_CAPACITY]; /* the first rejected locators' addresses */
    char tag[LOCUS_ID_CAPACITY];   /* NUL-terminated */
    char floor[LOCUS_ID_CAPACITY]; /* NUL-terminated */
} locus_position;

enum locus_event_kind { LOCUS_EVENT_EXIT = 0, LOCUS_EVENT_ENTER = 1, LOCUS_EVENT_DWELL = 2 };

/** One zone event (SPEC section 3). */
typedef struct locus_event {
    double t_s;                 /* event time, s */
    double dwell_s;             /* dwell: seconds since entry (k * dwellSeconds); 0 otherwise */
    int32_t kind;               /* enum locus_event_kind */
    char tag[LOCUS_ID_CAPACITY];
    char floor[LOCUS_ID_CAPACITY];
    char zone[LOCUS_ID_CAPACITY];
} locus_event;

/** Counters of an engine. */
typedef struct locus_stats {
    int64_t ranges_accepted;    /* ranges that joined an epoch */
    int64_t ranges_skipped;     /* ranges that could not be used (unknown floor/anchor, NaN, time backwards) */
    int64_t epochs;             /* epochs formed */
    int64_t epochs_failed;      /* epochs that gave no fix (too few ranges, degenerate geometry, ...) */
    int64_t epochs_before_track;/* epochs before the tag's filter had a track */
    int64_t rejected_ranges;    /* ranges rejected as outliers over all least-squares fixes */
    int64_t pending_positions;  /* positions released and not yet polled */
    int64_t pending_events;     /* events released and not yet polled */
} locus_stats;

/** A point or locator position, m. */
typedef struct locus_point {
    double x_m, y_m, z_m;
} locus_point;

/** Options of locus_solve and locus_dop. All zeros (or NULL): sigma 0.1 m, tag height 0 m, automatic mode, robust. */
typedef struct locus_solve_options {
    double sigma_m;             /* range noise sigma, m, in [1e-6, 100]; 0: 0.1 m */
    double tag_height_m;        /* known tag height for planar solving, m */
    int32_t mode;               /* enum locus_mode */
    int32_t no_outlier_rejection; /* nonzero: plain least squares (no NLOS rejection) */
} locus_solve_options;

/** One least-squares solution of locus_solve. */
typedef struct locus_fix {
    double x_m, y_m, z_m;       /* position, m (planar: z = tag_height_m) */
    double covariance_m2[6];    /* xx, xy, xz, yy, yz, zz, m^2 (planar: z entries 0) */
    double hdop, vdop, pdop;    /* vdop 0 in planar mode */
    double residual_rms_m;      /* RMS of the used ranges' residuals, m */
    double chi_square;          /* sum of (e_i / sigma_i)^2 over the used ranges */
    uint64_t rejected_mask;     /* bit i: range i rejected as an outlier (i < 64) */
    int32_t mode;               /* LOCUS_MODE_PLANAR or LOCUS_MODE_SPATIAL: the mode solved in */
    int32_t anchors_used;       /* ranges in the final fit */
    int32_t rejected_count;     /* ranges rejected */
    int32_t iterations;         /* Gauss-Newton steps of the final fit */
    int32_t converged;          /* 1 when the last step was within tolerance */
    int32_t reserved;
} locus_fix;

/** Dilution of precision at one point. */
typedef struct locus_dop_result {
    double hdop, vdop, pdop;    /* vdop 0 in planar mode */
    int32_t mode;               /* LOCUS_MODE_PLANAR or LOCUS_MODE_SPATIAL */
    int32_t reserved;
} locus_dop_result;

/* ---------------------------------------------------------------- engine */

/** An engine: one site, any number of tags. Opaque. */
typedef struct locus_engine locus_engine;

/**
 * Creates an engine from site JSON (SPEC section 1) of `length` bytes (or LOCUS_NUL_TERMINATED).
 * `options` may be NULL (defaults). On success *out_engine is the new engine; on failure it is NULL.
 * Errors: LOCUS_E_INVALID_ARGUMENT (null pointer, option out of range, an id longer than 63 bytes),
 * LOCUS_E_MALFORMED_JSON, the site codes 3101-3112, LOCUS_E_UNKNOWN_FLOOR (options->default_floor).
 */
int locus_engine_create_json(const char *json, size_t length, const locus_options *options,
                             locus_engine **out_engine);

/** As locus_engine_create_json, reading the site from the file at `path` (adds LOCUS_E_FILE_UNREADABLE). */
int locus_engine_create_file(const char *path, const locus_options *options, locus_engine **out_engine);

/**
 * Destroys an engine (NULL: nothing happens, LOCUS_OK). Positions and events not polled are lost.
 * A second destroy of the same handle returns LOCUS_E_CALL_ORDER (detected unless the address
 * was reused by a newer engine).
 */
int locus_engine_destroy(locus_engine *engine);

/**
 * Pushes one range. Ranges of a tag must come in non-decreasing time. A range the engine cannot use
 * is skipped and counted (as `locus replay` does) and the status says why: LOCUS_E_INVALID_RANGE
 * (negative, NaN or infinite range or time), LOCUS_E_UNKNOWN_FLOOR, LOCUS_E_CALL_ORDER (time before
 * the tag's previous range, or the engine finished), LOCUS_E_INVALID_ARGUMENT (no such locator on the
 * floor; NULL; tag or floor id empty, longer than 63 bytes or not UTF-8).
 */
int locus_engine_push(locus_engine *engine, const locus_range *range);

/**
 * Pushes `count` ranges in order, as `count` calls of locus_engine_push. Every range is offered even
 * when one is skipped; the status is LOCUS_OK when all were used, otherwise that of the first skipped
 * range (its index is in the message). *out_accepted (may be NULL) receives the number used.
 */
int locus_engine_push_ranges(locus_engine *engine, const locus_range *ranges, size_t count,
                             size_t *out_accepted);

/**
 * Pushes one range difference (since ABI 0.2). The engine times it like a range (an epoch holds either
 * ranges or differences: a row of the other kind solves the open epoch first) and solves the epoch's
 * differences by weighted least squares (correlated differences of one reference handled) or as the
 * tightly coupled filter's measurements. Returns LOCUS_OK when the difference joined an epoch;
 * otherwise why it was skipped (counted as `locus replay` counts it): LOCUS_E_INVALID_RANGE (non-finite
 * time or difference; |tdoa_m| beyond the two locators' distance + 2 m), LOCUS_E_INVALID_ARGUMENT
 * (A = B, an unknown locator, bad tag or floor text), LOCUS_E_UNKNOWN_FLOOR, LOCUS_E_CALL_ORDER.
 */
int locus_engine_push_difference(locus_engine *engine, const locus_difference *difference);

/**
 * Pushes `count` differences in order, as `count` calls of locus_engine_push_difference; the status and
 * *out_accepted (may be NULL) as locus_engine_push_ranges.
 */
int locus_engine_push_differences(locus_engine *engine, const locus_difference *differences, size_t count,
                                  size_t *out_accepted);

/**
 * Makes the engine one of `count` partitions of the tags (0 <= index < count): it solves the tags
 * whose index of first appearance is `index` mod `count` and only observes the others' rows (checked,
 * counted, moving the clock). `count` engines fed the same stream give the single engine's positions
 * and events restricted to their tags; merged by (t_s, locus_engine_tag_index) and in SPEC 4.7 order
 * they are its bytes (archive replay on a cluster). Each counts every skipped row as the single engine
 * does, except "late_range" (a straggler of a tag's round): only the tag's own partition, which keeps
 * its rounds, counts it, so those counts add up over the partitions. Call before the first range.
 * Errors: LOCUS_E_INVALID_ARGUMENT (bad index or count; a smoothed engine), LOCUS_E_CALL_ORDER.
 */
int locus_engine_set_partition(locus_engine *engine, size_t index, size_t count);

/**
 * The index of `tag` in order of first appearance (0, 1, ...): the order of equal-time positions.
 * Errors: LOCUS_E_INVALID_ARGUMENT (NULL, bad text, or a tag no range named yet).
 */
int locus_engine_tag_index(locus_engine *engine, const char *tag, int64_t *out_index);

/**
 * Moves the engine's clock to t_s (a timer tick): epochs no later range can join are solved and
 * zones whose out-period passed exit. Times at or before the clock are ignored (LOCUS_OK).
 * Errors: LOCUS_E_INVALID_RANGE (t_s not finite), LOCUS_E_CALL_ORDER (finished).
 */
int locus_engine_advance(locus_engine *engine, double t_s);

/**
 * Ends the stream: solves every open epoch and releases every position and event (the clock stays
 * at the latest time seen, so zones still entered get no exit). Later pushes return LOCUS_E_CALL_ORDER;
 * polling goes on. A second finish returns LOCUS_E_CALL_ORDER.
 */
int locus_engine_finish(locus_engine *engine);

/**
 * Takes up to `capacity` released positions, oldest first, in (time, tag) order, into `out`;
 * *out_count receives the number written. Positions not taken stay for the next poll.
 * `out` may be NULL when capacity is 0 (then *out_count is 0; locus_engine_stats tells what waits).
 */
int locus_engine_poll_positions(locus_engine *engine, locus_position *out, size_t capacity, size_t *out_count);

/** As locus_engine_poll_positions, for zone events (SPEC section 4.7 order). */
int locus_engine_poll_events(locus_engine *engine, locus_event *out, size_t capacity, size_t *out_count);

/** The engine's counters. */
int locus_engine_stats(locus_engine *engine, locus_stats *out);

/* ---------------------------------------------------------------- trace files and skipped rows */

/** Reasons a row is skipped, in the order of locus_engine_skipped's counters (`locus replay --json`'s "skipped" keys). */
enum locus_skip_reason {
    LOCUS_SKIP_MISSING_FIELD = 0,      /* "missing_field": a required field empty, too few fields */
    LOCUS_SKIP_UNPARSEABLE_NUMBER = 1, /* "unparseable_number" */
    LOCUS_SKIP_INVALID_ANCHOR = 2,     /* "invalid_anchor": not a 16-bit address */
    LOCUS_SKIP_UNKNOWN_ANCHOR = 3,     /* "unknown_anchor": no such locator on the row's floor */
    LOCUS_SKIP_UNKNOWN_FLOOR = 4,      /* "unknown_floor" */
    LOCUS_SKIP_NON_FINITE = 5,         /* "non_finite": NaN or infinite range or time */
    LOCUS_SKIP_NEGATIVE_RANGE = 6,     /* "negative_range" */
    LOCUS_SKIP_TIME_BACKWARDS = 7,     /* "time_backwards": before the tag's previous row */
    LOCUS_SKIP_CLOCK_JUMP = 8,         /* "clock_jump": far after the tag's previous row, unconfirmed */
    LOCUS_SKIP_RANGE_TOO_LONG = 9,     /* "range_too_long" */
    LOCUS_SKIP_LATE_RANGE = 10,        /* "late_range": a straggler of a round already solved */
    LOCUS_SKIP_FUTURE_TIME = 11,       /* "future_time": ahead of the stream's clock (live) */
    LOCUS_SKIP_TAG_LIMIT = 12,         /* "tag_limit": a new tag beyond the live tag limit */
    LOCUS_SKIP_INVALID_TAG = 13,       /* "invalid_tag": too long, not UTF-8, or a control character */
    LOCUS_SKIP_SAME_LOCATOR = 14,      /* "same_locator": a range difference with A = B */
    LOCUS_SKIP_DIFFERENCE_TOO_LONG = 15, /* "difference_too_long": |tdoa_m| beyond the locators' distance + margin */
    LOCUS_SKIP_REASON_COUNT = 16
};

/**
 * Reads the trace file at `path` (SPEC section 2: columns t, anchor, range_m, optional tag and floor,
 * in any order) with the reader of `locus replay` and pushes its usable rows in non-decreasing time
 * (ties in file order). Rows the reader cannot use and rows the engine skips are counted exactly as
 * `locus replay` counts them (locus_engine_skipped), not reported as a failure. *out_rows (may be
 * NULL) receives the file's data rows, *out_accepted (may be NULL) the rows that joined an epoch.
 * Errors: LOCUS_E_INVALID_ARGUMENT (NULL path), LOCUS_E_CALL_ORDER (finished), LOCUS_E_FILE_UNREADABLE,
 * LOCUS_E_CSV_MISSING_COLUMN, LOCUS_E_MALFORMED_CSV (no header).
 */
int locus_engine_push_trace_file(locus_engine *engine, const char *path, size_t *out_rows, size_t *out_accepted);

/**
 * The engine's skipped rows by reason: writes min(capacity, LOCUS_SKIP_REASON_COUNT) counters, indexed
 * by enum locus_skip_reason, into `out` (NULL allowed when capacity is 0). Their sum is
 * locus_stats.ranges_skipped.
 */
int locus_engine_skipped(locus_engine *engine, int64_t *out, size_t capacity);

/**
 * Compares what the engine releases with the truth CSV at `path` (as `locus replay --truth`);
 * `zone_window_s` is the zone score's matching window (0: 5 s). Call before the first range.
 * Errors: LOCUS_E_CALL_ORDER (a range was pushed already), LOCUS_E_INVALID_ARGUMENT, the reader's codes.
 */
int locus_engine_set_truth(locus_engine *engine, const char *path, double zone_window_s);

/**
 * After locus_engine_finish: the summary `locus replay --json` prints for the same rows and options
 * (with truth: rmse_m, per_tag, cdf, zone_score, ...), as a text freed with locus_free; elapsed_s
 * is the wall time from the handle's creation to its finish. Notes and verdict as locus_replay_file.
 * Positions and events not yet polled stay to be polled.
 * Errors: LOCUS_E_CALL_ORDER (not finished), LOCUS_E_INVALID_ARGUMENT.
 */
int locus_engine_summary(locus_engine *engine, char **out_summary_json, char **out_notes, int *out_verdict);

/**
 * The ordered merge of partition outputs (engines with locus_engine_set_partition): the order in
 * which the partitions' positions and events, concatenated, give the single engine's bytes.
 * `out_part[n]`, `out_index[n]` (room for the sum of `counts`) name the n-th output: partition and
 * index in it. Positions go by (time, tag index of first appearance): partition k has `counts[k]`
 * times `times[k]` and tag indices `tag_indices[k]` (locus_engine_tag_index). Events go in SPEC §4.7
 * release order (an exit at the time of its own enter right after it): partition k's `counts[k]`
 * events at `parts[k]`, in the order it released them. Ties keep partition order.
 * Errors: LOCUS_E_INVALID_ARGUMENT (NULL arrays with a positive count, a non-finite time, bad ids).
 */
int locus_merge_positions(const double *const *times, const int64_t *const *tag_indices, const size_t *counts,
                          size_t part_count, size_t *out_part, size_t *out_index);
int locus_merge_events(const locus_event *const *parts, const size_t *counts, size_t part_count, size_t *out_part,
                       size_t *out_index);

/**
 * The single run's `locus replay --json` summary from its `count` partitions' summaries (`summaries[k]`:
 * the JSON text locus_engine_summary gave partition k), as a text freed with locus_free. What each
 * partition solved adds up (fixes, epochs, failed_epochs, epochs_before_track, rejected_ranges, events,
 * and the skipped rows only a tag's own partition counts: "late_range"); what every partition read
 * counts once and must agree (ranges, tags, the other skip reasons, filter, smooth); elapsed_s is the
 * slowest partition's, fixes_per_s the merged fixes over it. No binding re-derives these sums.
 * Errors: LOCUS_E_INVALID_ARGUMENT (NULL arguments, count 0, a text that is not JSON, partitions that
 * disagree on what they share, a summary with truth: its percentiles need every error).
 */
int locus_merge_summaries(const char *const *summaries, size_t count, char **out_summary_json);



/* ---------------------------------------------------------------- formatting */

/**
 * Writes `event` as the JSON Lines object `locus replay --events` writes, without the line break,
 * e.g. {"t": 12.250, "tag": "T1", "floor": "1F", "zone": "entrance", "event": "enter"}, NUL-terminated.
 * *out_length (may be NULL) receives the length without the NUL, also when the buffer is too small
 * (then LOCUS_E_INVALID_ARGUMENT and nothing is written: retry with capacity > *out_length).
 */
int locus_event_to_json(const locus_event *event, char *buffer, size_t capacity, size_t *out_length);

/**
 * Writes `position` as the CSV row `locus replay --positions` writes (columns as in
 * locus_positions_csv_header), without the line break, NUL-terminated. Buffer rules as
 * locus_event_to_json.
 */
int locus_position_to_csv(const locus_position *position, char *buffer, size_t capacity, size_t *out_length);

/** The header line of the positions CSV, without the line break (a static string). */
const char *locus_positions_csv_header(void);

/* ---------------------------------------------------------------- stateless solving */

/**
 * Solves one epoch without an engine: weighted least squares (with NLOS rejection unless disabled)
 * from ranges_m[i] (bias already removed) to locators[i], i < count (count <= 4096).
 * Errors: LOCUS_E_INVALID_ARGUMENT (null pointer, count too large, non-finite locator, bad option),
 * LOCUS_E_TOO_FEW_RANGES, LOCUS_E_DEGENERATE_GEOMETRY, LOCUS_E_INVALID_RANGE, LOCUS_E_SOLVER_DIVERGED.
 */
int locus_solve(const locus_point *locators, const double *ranges_m, size_t count,
                const locus_solve_options *options, locus_fix *out);

/**
 * Dilution of precision of `count` locators (<= 4096) at `point` (planar: point->z_m is replaced by
 * options->tag_height_m). Errors: LOCUS_E_INVALID_ARGUMENT, LOCUS_E_TOO_FEW_RANGES (fewer locators
 * than unknowns), LOCUS_E_DEGENERATE_GEOMETRY.
 */
int locus_dop(const locus_point *locators, size_t count, const locus_point *point,
              const locus_solve_options *options, locus_dop_result *out);

/* ---------------------------------------------------------------- calibration without truth */

/** locus_calibration_options.holdout_block_ms: no held-out validation, the fit returned as it is (0.2's behaviour). */
#define LOCUS_CALIBRATION_NO_HOLDOUT (-1)

/** Options of locus_calibrate. All zeros (or NULL): biases only, positions not moved, 50 ranges per locator, the first
 * floor, validated on held-out blocks of 10 s. */
typedef struct locus_calibration_options {
    const char *floor;          /* floor of the ranges that name none; NULL: the site's first floor */
    int32_t fit_slope;          /* nonzero: fit each locator's range scale too (relative: their mean stays the site's) */
    int32_t fix_positions;      /* nonzero: flagged locators are moved to their fitted positions in the site written,
                                   when the held-out blocks confirm the moves */
    int32_t min_ranges;         /* ranges a locator needs to be calibrated; 0: 50 */
    int32_t holdout_block_ms;   /* blocks of the held-out validation, 1 .. 86,400,000 ms; 0: 10 s;
                                   LOCUS_CALIBRATION_NO_HOLDOUT: none (0.2 had a reserved field here) */
} locus_calibration_options;

/** Bits of locus_locator_calibration.flags. */
enum locus_calibration_flag {
    LOCUS_CALIBRATION_ESTIMATED = 1, /* the bias was fitted (otherwise the recording did not determine it: the site's value is kept) */
    LOCUS_CALIBRATION_FLAGGED = 2,   /* the recording puts the locator away from its surveyed position beyond the noise */
    LOCUS_CALIBRATION_CHECKED = 4    /* offset_m holds the fitted correction of its surveyed position */
};

/** One locator's result of locus_calibrate. */
typedef struct locus_locator_calibration {
    double bias_m;              /* fitted range bias (ESTIMATED), else the site's biasM, m */
    double bias_sd_m;           /* its standard deviation, m; 0 when not fitted */
    double slope;               /* fitted range scale (fit_slope), else the site's biasSlope */
    double slope_sd;            /* its standard deviation; 0 when not fitted */
    double noise_m;             /* robust range noise, m; 0 without ranges */
    double offset_m[3];         /* fitted correction of its surveyed position (CHECKED), m */
    double offset_sd_m;         /* its largest standard deviation, m */
    int64_t ranges;             /* tag ranges to it */
    char floor[LOCUS_ID_CAPACITY];
    uint16_t address;           /* the locator's 16-bit address */
    uint16_t reserved;
    int32_t flags;              /* locus_calibration_flag bits */
} locus_locator_calibration;

/** The fit of locus_calibrate over every floor the ranges reach. */
typedef struct locus_calibration_summary {
    double residual_rms_m;      /* RMS of the residuals the final weights keep, m (worst floor) */
    int64_t locators;           /* results: every locator of every floor the ranges reach */
    int64_t estimated;          /* locators whose bias was fitted */
    int64_t flagged;            /* locators flagged by the survey check */
    int64_t unused_ranges;      /* ranges whose floor or locator is not in the site */
    int32_t common_offset_separable; /* 1 when the recording separates the biases' common offset on every floor */
    int32_t warnings;           /* things the recording could not determine (`locus calibrate` prints them) */
} locus_calibration_summary;

/** locus_calibration_validation.verdict: what the held-out blocks said, and so what site_out holds (ABI 0.3). */
enum locus_calibration_verdict {
    LOCUS_CALIBRATION_NOT_VALIDATED = 0,     /* holdout_block_ms LOCUS_CALIBRATION_NO_HOLDOUT: site_out is the fit */
    LOCUS_CALIBRATION_ACCEPTED = 1,          /* shown better on the held-out blocks: site_out is the fit */
    LOCUS_CALIBRATION_NOT_JUDGED = 2,        /* nothing held out predicts a range (4 locators in 3-D, 3 in 2-D): the fit,
                                                unjudged (`reason`; check it against truth before relying on it) */
    LOCUS_CALIBRATION_POSITIONS_REFUSED = 3, /* the biases accepted, the moves of fix_positions not: site_out has the
                                                biases with every locator where it was surveyed */
    LOCUS_CALIBRATION_UNPROVEN = 4,          /* not shown better (or too short to judge): site_out is the site as given */
    LOCUS_CALIBRATION_REFUSED = 5            /* worse on the held-out blocks: site_out is the site as given */
};

/** The held-out validation of locus_calibrate_validated (docs/calibration.md, "Held-out validation"): fitted on
 * alternate blocks of time, scored on the others by the median |leave-one-out range residual|. */
typedef struct locus_calibration_validation {
    int32_t verdict;            /* enum locus_calibration_verdict */
    int32_t blocks;             /* blocks of block_s the ranges' time span was cut into */
    int32_t held_out_blocks;    /* of them held out (every second one) */
    int32_t moved;              /* locators the fit blocks moved (fix_positions), accepted or not */
    double block_s;             /* block length, s */
    int64_t fit_ranges;         /* ranges in the fit blocks */
    int64_t held_out_ranges;    /* ranges in the held-out blocks */
    int64_t scored;             /* held-out ranges predicted by the others (the figures' sample) */
    double surveyed_m;          /* held-out figure with the site as given, m; 0 when not judged */
    double calibrated_m;        /* held-out figure with the calibration that site_out holds or was refused, m; 0 when not judged */
    char reason[512];           /* why it is not ACCEPTED, in words (NUL-terminated UTF-8, cut at a character);
                                   "" when ACCEPTED or NOT_VALIDATED */
} locus_calibration_validation;

/**
 * Calibrates the site (JSON of `length` bytes or LOCUS_NUL_TERMINATED) from `count` measured ranges
 * (biases not removed) without ground truth, as `locus calibrate` does without --truth: each
 * locator's range bias (and scale), its noise, and a check of its surveyed position, validated on
 * held-out blocks (options->holdout_block_ms). Writes one result per locator of every floor the ranges
 * reach into `locators` (room for `capacity`; the fit of the whole recording, whatever the validation
 * said), the summary (may be NULL), and the site to use as NUL-terminated JSON into `site_out` (may be
 * NULL with site_capacity 0; *site_length gets its length without the NUL either way): the calibrated
 * site when the held-out blocks show it better, else the site as given (locus_calibrate_validated
 * says which, and why).
 * Errors: LOCUS_E_INVALID_ARGUMENT (null pointer, bad option or id, a capacity too small: the
 * summary's `locators` and *site_length say what is needed), LOCUS_E_INVALID_RANGE, the site codes,
 * LOCUS_E_UNKNOWN_FLOOR, LOCUS_E_TOO_FEW_RANGES (a floor with fewer than 10 usable epochs),
 * LOCUS_E_DEGENERATE_GEOMETRY.
 */
int locus_calibrate(const char *site_json, size_t length, const locus_range *ranges, size_t count,
                    const locus_calibration_options *options, locus_locator_calibration *locators, size_t capacity,
                    locus_calibration_summary *summary, char *site_out, size_t site_capacity, size_t *site_length);

/** locus_calibrate with the held-out validation's verdict and figures in `*validation` (may be NULL; ABI 0.3). */
int locus_calibrate_validated(const char *site_json, size_t length, const locus_range *ranges, size_t count,
                              const locus_calibration_options *options, locus_locator_calibration *locators,
                              size_t capacity, locus_calibration_summary *summary, locus_calibration_validation *validation,
                              char *site_out, size_t site_capacity, size_t *site_length);

/* ---------------------------------------------------------------- whole runs: replay, geometry, calibrate */

/*
 * The command line's three file-to-summary jobs as typed calls: each reads and writes the files its
 * request names, exactly as `locus replay`, `locus geometry` and `locus calibrate` do (the same
 * library code), and hands back the command's `--json` summary as a NUL-terminated UTF-8 text that
 * the caller frees with locus_free. *out_notes (when not NULL) gets the lines the command writes on
 * standard error (warnings, and the reason of a failed verdict; "" when none), also freed with
 * locus_free; *out_verdict gets the command's run-time verdict: 0, or 1 when the run produced
 * nothing usable (no fix; truth that covers no fix; nothing calibrated): the command's exit 1.
 * On an error (the return value) nothing is allocated and the out pointers are set to NULL.
 */

/** Frees a text the library allocated (a summary or notes). NULL is accepted. */
void locus_free(char *text);

/** Bits of locus_replay_request.flags. */
enum locus_replay_flag {
    LOCUS_REPLAY_TRUTH_SHIFT = 1,      /* compare a fix at t with the truth at t + truth_shift_s (`--truth-shift S`) */
    LOCUS_REPLAY_TRUTH_SHIFT_AUTO = 2  /* estimate the shift from the range residuals (`--truth-shift auto`) */
};

/** What `locus replay` reads and writes. Zeros are the defaults. */
typedef struct locus_replay_request {
    const char *site_path;      /* site JSON (required) */
    const char *trace_path;     /* trace CSV, gzip allowed (required) */
    const char *truth_path;     /* truth CSV (`--truth`); NULL: no comparison */
    const char *positions_path; /* `--positions`; NULL: not written */
    const char *events_path;    /* `--events`; NULL: not written */
    const char *report_path;    /* `--report` SVG (needs truth_path); NULL: none */
    double zone_window_s;       /* `--zone-window`, s, in [0.001, 3600]; 0: 5 s */
    double truth_shift_s;       /* with LOCUS_REPLAY_TRUTH_SHIFT, s, in [-3600, 3600] */
    uint32_t flags;             /* enum locus_replay_flag bits */
    uint32_t jobs;              /* `--jobs`, 1-256 tag-sharded engines (same bytes for every count); 0: 1 */
} locus_replay_request;

/**
 * `locus replay` over `request` with the engine `options` (NULL: defaults): positions and events
 * written to the files named, the summary (`locus replay --json`'s object; elapsed_s is this
 * call's wall time) returned. The files appear whole or not at all, as the command's: written aside
 * and put in place only when the call succeeds with verdict 0; an error or verdict 1 leaves the
 * files that existed as they were.
 * Errors: LOCUS_E_INVALID_ARGUMENT (NULL request or path, bad option or flag), LOCUS_E_USAGE (a
 * report without truth), the site codes, LOCUS_E_UNKNOWN_FLOOR, the reader's E5001/E5003/E5004,
 * LOCUS_E_FILE_UNWRITABLE.
 */
int locus_replay_file(const locus_replay_request *request, const locus_options *options, char **out_summary_json,
                      char **out_notes, int *out_verdict);

/** Bits of locus_geometry_request.flags. */
enum locus_geometry_flag {
    LOCUS_GEOMETRY_SUGGEST = 1, /* `--suggest`: where one more locator would help most */
    LOCUS_GEOMETRY_KERNEL = 2,  /* `--method kernel`: the C kernel per cell (the reference) instead of batched */
    LOCUS_GEOMETRY_TDOA = 4     /* `--tdoa` (ABI 0.2): plan a range-difference site (difference DOP, 4/5 locators) */
};

/** What `locus geometry` reads and writes. Zeros are the defaults. */
typedef struct locus_geometry_request {
    const char *site_path;   /* site JSON (required) */
    const char *floor;       /* `--floor`; NULL: the site's first floor */
    const char *svg_path;    /* `--svg` heatmap; NULL: none */
    const char *trace_path;  /* `--trace`: the survey check against a recording; NULL: none */
    double grid_m;           /* `--grid`, m, in [0.001, 10000]; 0: 0.5 m */
    double max_range_m;      /* `--max-range`, m, in [0.01, 100000]; 0: 30 m */
    double accuracy_sigma_m; /* `--accuracy` range sigma, m, in [0.0001, 100]; 0: none */
    uint32_t flags;          /* enum locus_geometry_flag bits */
    uint32_t reserved;       /* 0 */
} locus_geometry_request;

/**
 * `locus geometry` over `request`: the DOP map, coverage, warnings (and suggestion, survey check,
 * accuracy), the heatmap written when asked; *out_summary_json gets `locus geometry --json`'s object.
 * Errors: LOCUS_E_INVALID_ARGUMENT, LOCUS_E_USAGE (a grid of more than 1,000,000 cells), the site
 * codes, LOCUS_E_UNKNOWN_FLOOR, LOCUS_E_NO_FLOOR_MAP, LOCUS_E_TOO_FEW_RANGES (survey check),
 * LOCUS_E_FILE_UNREADABLE, LOCUS_E_FILE_UNWRITABLE.
 */
int locus_geometry(const locus_geometry_request *request, char **out_summary_json);

enum locus_estimator { LOCUS_ESTIMATOR_DEFAULT = 0, LOCUS_ESTIMATOR_TUKEY = 1, LOCUS_ESTIMATOR_HUBER = 2, LOCUS_ESTIMATOR_MEDIAN = 3 };
enum locus_height_source { LOCUS_HEIGHT_AUTO = 0, LOCUS_HEIGHT_FLOOR = 1, LOCUS_HEIGHT_TRUTH = 2 };
/** Bits of locus_calibrate_request.flags. */
enum locus_calibrate_flag {
    LOCUS_CALIBRATE_SLOPE = 1,         /* `--slope`: a range scale per locator besides the bias */
    LOCUS_CALIBRATE_FIX_POSITIONS = 2, /* `--fix-positions` (without truth): out_path moves flagged locators */
    LOCUS_CALIBRATE_NO_HOLDOUT = 4     /* `--holdout-block 0`: no held-out validation; out_path written unjudged */
};

/** What `locus calibrate` reads and writes. Zeros are the defaults. */
typedef struct locus_calibrate_request {
    const char *site_path;  /* site JSON (required) */
    const char *trace_path; /* trace CSV (required) */
    const char *truth_path; /* `--truth`; NULL: calibration from the ranges alone, with the survey check */
    const char *out_path;   /* `--out`: the calibrated site; NULL: not written */
    const char *floor;      /* `--floor` of rows without one; NULL: the site's first floor */
    int32_t estimator;      /* enum locus_estimator (with truth only; DEFAULT: tukey) */
    int32_t height;         /* enum locus_height_source */
    int64_t min_samples;    /* `--min-samples`, >= 1; 0: 10 with truth, 50 ranges without */
    uint32_t flags;         /* enum locus_calibrate_flag bits */
    uint32_t holdout_block_ms; /* `--holdout-block` in milliseconds, 1 .. 86,400,000; 0: 10 s (0 with NO_HOLDOUT) */
} locus_calibrate_request;

/**
 * `locus calibrate` over `request`; *out_summary_json gets `locus calibrate --json`'s object, or
 * NULL when nothing could be calibrated and the verdict (1) and notes say why. The object's
 * `validation` is the held-out check (blocks of holdout_block_ms, 10 s by default; docs/calibration.md):
 * when it refuses the calibration, or without truth does not show it better, out_path is not written,
 * the verdict is 1 and the notes say why (with the summary). LOCUS_CALIBRATE_NO_HOLDOUT turns the check
 * off (`validation` null) and writes out_path unjudged.
 * Errors: LOCUS_E_INVALID_ARGUMENT, LOCUS_E_USAGE (options that do not go together), the site codes,
 * LOCUS_E_UNKNOWN_FLOOR, LOCUS_E_TOO_FEW_RANGES, LOCUS_E_DEGENERATE_GEOMETRY, the reader's codes,
 * LOCUS_E_FILE_UNWRITABLE.
 */
int locus_calibrate_file(const locus_calibrate_request *request, char **out_summary_json, char **out_notes,
                         int *out_verdict);

/* ---------------------------------------------------------------- ABI checks (C99 static asserts) */

/* The library reads and writes these structs at fixed offsets (LP64: 64-bit pointers and size_t). */
#define LOCUS_STATIC_ASSERT(name, condition) typedef char locus_static_assert_##name[(condition) ? 1 : -1]
LOCUS_STATIC_ASSERT(lp64, sizeof(void *) == 8 && sizeof(size_t) == 8);
LOCUS_STATIC_ASSERT(calibration_sizes, sizeof(locus_calibration_options) == 24 && sizeof(locus_locator_calibration) == 152
                    && offsetof(locus_locator_calibration, floor) == 80 && offsetof(locus_locator_calibration, flags) == 148
                    && sizeof(locus_calibration_summary) == 48);
LOCUS_STATIC_ASSERT(calibration_validation_size, sizeof(locus_calibration_validation) == 576
                    && offsetof(locus_calibration_validation, surveyed_m) == 48
                    && offsetof(locus_calibration_validation, reason) == 64);
LOCUS_STATIC_ASSERT(options_size, sizeof(locus_options) == 40);
LOCUS_STATIC_ASSERT(range_size, sizeof(locus_range) == 40 && offsetof(locus_range, anchor) == 32);
LOCUS_STATIC_ASSERT(difference_size, sizeof(locus_difference) == 40 && offsetof(locus_difference, anchor_a) == 32
                    && offsetof(locus_difference, anchor_b) == 34);
LOCUS_STATIC_ASSERT(position_size, sizeof(locus_position) == 328 && offsetof(locus_position, flags) == 168
                    && offsetof(locus_position, rejected) == 180 && offsetof(locus_position, tag) == 196
                    && offsetof(locus_position, floor) == 260);
LOCUS_STATIC_ASSERT(event_size, sizeof(locus_event) == 216 && offsetof(locus_event, tag) == 20
                    && offsetof(locus_event, zone) == 148);
LOCUS_STATIC_ASSERT(stats_size, sizeof(locus_stats) == 64);
LOCUS_STATIC_ASSERT(point_size, sizeof(locus_point) == 24);
LOCUS_STATIC_ASSERT(solve_options_size, sizeof(locus_solve_options) == 24);
LOCUS_STATIC_ASSERT(fix_size, sizeof(locus_fix) == 144 && offsetof(locus_fix, rejected_mask) == 112
                    && offsetof(locus_fix, mode) == 120);
LOCUS_STATIC_ASSERT(dop_size, sizeof(locus_dop_result) == 32);
LOCUS_STATIC_ASSERT(replay_request_size, sizeof(locus_replay_request) == 72 && offsetof(locus_replay_request, flags) == 64);
LOCUS_STATIC_ASSERT(geometry_request_size, sizeof(locus_geometry_request) == 64 && offsetof(locus_geometry_request, flags) == 56);
LOCUS_STATIC_ASSERT(calibrate_request_size, sizeof(locus_calibrate_request) == 64 && offsetof(locus_calibrate_request, min_samples) == 48);
#undef LOCUS_STATIC_ASSERT

#ifdef __cplusplus
}
#endif

#endif /* LOCUS_H */
