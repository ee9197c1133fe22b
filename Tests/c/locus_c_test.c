/*
 * locus_c_test — the C ABI's test program (run by scripts/test-c).
 *
 * usage: locus_c_test SITE TRACE EXPECTED_POSITIONS EXPECTED_EVENTS EXPECTED_VERSION
 *
 * Replays TRACE through the C API in uneven batches with interleaved timer ticks and partial polls,
 * and requires the positions and events to equal `locus replay`'s (byte-identical files, and the
 * struct fields within the CSV's printed precision); checks the version, the status table, the
 * stateless solver and DOP against closed forms, and that bad input of every kind returns a status
 * and a message instead of aborting. Exit status 0 when every check passed.
 */
#include "locus.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;
static int checks = 0;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        ++checks;                                                               \
        if (!(cond)) {                                                          \
            ++failures;                                                         \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, "\n");                                              \
        }                                                                       \
    } while (0)

/* A status check that prints the library's message on mismatch. */
#define CHECK_STATUS(call, expected)                                             \
    do {                                                                         \
        int got_ = (call);                                                       \
        char msg_[512];                                                          \
        locus_last_error_message(msg_, sizeof msg_);                             \
        CHECK(got_ == (expected), "%s returned %d (%s), expected %d; last error: %s", \
              #call, got_, locus_status_name(got_), (int)(expected), msg_);      \
    } while (0)

/* ------------------------------------------------------------------ small helpers */

static char *read_file(const char *path, size_t *length) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(buf, 2 * cap + 1);
            if (!bigger) { free(buf); buf = NULL; break; }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[n] = 0;
    if (length) *length = n;
    return buf;
}

/* A growable text buffer. */
typedef struct { char *data; size_t length, capacity; } text;

static void text_append(text *t, const char *s, size_t n) {
    if (t->length + n + 1 > t->capacity) {
        size_t cap = t->capacity ? t->capacity : 4096;
        while (cap < t->length + n + 1) cap *= 2;
        char *bigger = realloc(t->data, cap);
        if (!bigger) { fprintf(stderr, "out of memory\n"); exit(2); }
        t->data = bigger;
        t->capacity = cap;
    }
    memcpy(t->data + t->length, s, n);
    t->length += n;
    t->data[t->length] = 0;
}

/* ------------------------------------------------------------------ trace reading */

typedef struct {
    double t, range;           /* the range, or the difference tdoa_m of a difference row */
    unsigned anchor;           /* the locator; A of a difference row */
    unsigned anchor_b;         /* B of a difference row */
    int is_difference;
    char tag[LOCUS_ID_CAPACITY], floor[LOCUS_ID_CAPACITY];
    long line;
} row;

static int column_index(char **names, int count, const char *name) {
    for (int i = 0; i < count; ++i) if (strcmp(names[i], name) == 0) return i;
    return -1;
}

static int compare_rows(const void *a, const void *b) {
    const row *x = a, *y = b;
    if (x->t < y->t) return -1;
    if (x->t > y->t) return 1;
    return (x->line > y->line) - (x->line < y->line); /* stable: file order at equal times */
}

/* Reads t, anchor, range_m[, tag][, floor] rows, or t, anchor_a, anchor_b, tdoa_m[, tag][, floor]
   (range differences), or both (the fixture has no quoting). */
static row *read_trace(const char *path, size_t *count) {
    char *content = read_file(path, NULL);
    if (!content) return NULL;
    size_t cap = 1024, n = 0;
    row *rows = malloc(cap * sizeof *rows);
    char *names[32];
    int columns = 0, ct = -1, ca = -1, cr = -1, cg = -1, cf = -1, cda = -1, cdb = -1, cd = -1;
    long line = 0;
    char *save = NULL;
    for (char *l = strtok_r(content, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        ++line;
        size_t len = strlen(l);
        if (len && l[len - 1] == '\r') l[--len] = 0;
        if (len == 0 || l[0] == '#') continue;
        char *fields[32];
        int k = 0;
        char *p = l;
        while (k < 32) { fields[k++] = p; char *c = strchr(p, ','); if (!c) break; *c = 0; p = c + 1; }
        if (columns == 0) {
            columns = k;
            for (int i = 0; i < k; ++i) names[i] = fields[i];
            ct = column_index(names, k, "t"); ca = column_index(names, k, "anchor");
            cr = column_index(names, k, "range_m"); cg = column_index(names, k, "tag"); cf = column_index(names, k, "floor");
            cda = column_index(names, k, "anchor_a"); cdb = column_index(names, k, "anchor_b"); cd = column_index(names, k, "tdoa_m");
            if (ct < 0 || ((ca < 0 || cr < 0) && (cda < 0 || cdb < 0 || cd < 0))) { free(rows); free(content); return NULL; }
            continue;
        }
        if (k < columns) continue;
        if (n == cap) { cap *= 2; rows = realloc(rows, cap * sizeof *rows); if (!rows) exit(2); }
        row *r = &rows[n++];
        r->t = strtod(fields[ct], NULL);
        r->is_difference = cr < 0 || fields[cr][0] == 0;
        r->range = strtod(fields[r->is_difference ? cd : cr], NULL);
        const char *a = fields[r->is_difference ? cda : ca];
        r->anchor = (unsigned)strtoul(a, NULL, (a[0] == '0' && (a[1] == 'x' || a[1] == 'X')) ? 16 : 10);
        if (r->is_difference) {
            const char *b = fields[cdb];
            r->anchor_b = (unsigned)strtoul(b, NULL, (b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) ? 16 : 10);
        }
        snprintf(r->tag, sizeof r->tag, "%s", cg >= 0 ? fields[cg] : "tag");
        snprintf(r->floor, sizeof r->floor, "%s", cf >= 0 ? fields[cf] : "");
        r->line = line;
    }
    free(content);
    qsort(rows, n, sizeof *rows, compare_rows);
    *count = n;
    return rows;
}

/* ------------------------------------------------------------------ tests */

static void test_version(const char *expected) {
    CHECK(strcmp(locus_version(), LOCUS_VERSION) == 0, "library %s, header %s", locus_version(), LOCUS_VERSION);
    CHECK(strcmp(locus_version(), expected) == 0, "library %s, locus --version %s", locus_version(), expected);
    char major[32];
    snprintf(major, sizeof major, "%d.%d.%d", LOCUS_VERSION_MAJOR, LOCUS_VERSION_MINOR, LOCUS_VERSION_PATCH);
    CHECK(strcmp(major, LOCUS_VERSION) == 0, "components %s vs %s", major, LOCUS_VERSION);
}

static void test_status_names(void) {
    static const int codes[] = {
        LOCUS_E_USAGE, LOCUS_E_CALL_ORDER, LOCUS_E_INVALID_ARGUMENT, LOCUS_E_NO_FLOOR_MAP, LOCUS_E_UNKNOWN_FLOOR,
        LOCUS_E_SITE_MISSING_FIELD, LOCUS_E_SITE_WRONG_TYPE, LOCUS_E_SITE_DUPLICATE_ID, LOCUS_E_SITE_DUPLICATE_ADDRESS,
        LOCUS_E_SITE_NON_FINITE_NUMBER, LOCUS_E_SITE_NEGATIVE_VALUE, LOCUS_E_SITE_NO_FLOOR,
        LOCUS_E_POLYGON_TOO_FEW_VERTICES, LOCUS_E_POLYGON_SELF_INTERSECTING, LOCUS_E_POLYGON_ZERO_AREA,
        LOCUS_E_INVALID_LOCATOR_ADDRESS, LOCUS_E_SITE_VALUE_OUT_OF_RANGE, LOCUS_E_TOO_FEW_RANGES,
        LOCUS_E_DEGENERATE_GEOMETRY, LOCUS_E_INVALID_RANGE, LOCUS_E_SOLVER_DIVERGED, LOCUS_E_FILTER_DIVERGENCE,
        LOCUS_E_FILE_UNREADABLE, LOCUS_E_MALFORMED_JSON, LOCUS_E_CSV_MISSING_COLUMN, LOCUS_E_MALFORMED_CSV,
        LOCUS_E_FILE_UNWRITABLE, LOCUS_E_UNDELIVERED_POSITIONS, LOCUS_E_LAPACK_INTERNAL};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; ++i) {
        char want[16];
        snprintf(want, sizeof want, "E%d", codes[i]);
        CHECK(strcmp(locus_status_name(codes[i]), want) == 0, "code %d is %s in the library", codes[i],
              locus_status_name(codes[i]));
    }
    CHECK(strcmp(locus_status_name(LOCUS_OK), "OK") == 0, "%s", locus_status_name(0));
    CHECK(strcmp(locus_status_name(4242), "unknown") == 0, "%s", locus_status_name(4242));
}

static const char *small_site =
    "{\"floors\":[{\"id\":\"1F\",\"tagHeightM\":1.1,\"locators\":["
    "{\"address\":\"0x0001\",\"x\":0,\"y\":0,\"z\":2.6},{\"address\":2,\"x\":10,\"y\":0,\"z\":2.6},"
    "{\"address\":3,\"x\":10,\"y\":10,\"z\":2.6},{\"address\":4,\"x\":0,\"y\":10,\"z\":2.6}],"
    "\"zones\":[{\"id\":\"desk\",\"polygon\":[{\"x\":4,\"y\":4},{\"x\":6,\"y\":4},{\"x\":6,\"y\":6},{\"x\":4,\"y\":6}]}]}]}";

static void test_create_errors(const char *site_path) {
    locus_engine *e = (locus_engine *)&e; /* must be overwritten with NULL on failure */
    CHECK_STATUS(locus_engine_create_json(NULL, 0, NULL, &e), LOCUS_E_INVALID_ARGUMENT);
    CHECK(e == NULL, "out_engine not cleared");
    CHECK(locus_last_error_code() == LOCUS_E_INVALID_ARGUMENT, "last code %d", locus_last_error_code());
    CHECK_STATUS(locus_engine_create_json(small_site, LOCUS_NUL_TERMINATED, NULL, NULL), LOCUS_E_INVALID_ARGUMENT);

    CHECK_STATUS(locus_engine_create_json("{\"floors\": [", LOCUS_NUL_TERMINATED, NULL, &e), LOCUS_E_MALFORMED_JSON);
    char message[512];
    size_t full = locus_last_error_message(message, sizeof message);
    CHECK(full > 0 && strstr(message, "E5002") != NULL, "message '%s'", message);
    /* snprintf semantics: truncated, NUL-terminated, full length returned */
    char tiny[6];
    size_t again = locus_last_error_message(tiny, sizeof tiny);
    CHECK(again == full && strlen(tiny) == 5, "truncation %zu vs %zu, '%s'", again, full, tiny);
    CHECK(locus_last_error_message(NULL, 0) == full, "length query");

    const char *duplicate = "{\"floors\":[{\"id\":\"1F\",\"locators\":[{\"address\":1,\"x\":0,\"y\":0},"
                            "{\"address\":\"0x0001\",\"x\":1,\"y\":0}]}]}";
    CHECK_STATUS(locus_engine_create_json(duplicate, LOCUS_NUL_TERMINATED, NULL, &e), LOCUS_E_SITE_DUPLICATE_ADDRESS);
    CHECK_STATUS(locus_engine_create_json("{\"floors\":[]}", LOCUS_NUL_TERMINATED, NULL, &e), LOCUS_E_SITE_NO_FLOOR);
    /* an explicit length shorter than the text: the JSON is cut, so malformed */
    CHECK_STATUS(locus_engine_create_json(small_site, 20, NULL, &e), LOCUS_E_MALFORMED_JSON);
    /* invalid UTF-8 in the JSON text */
    CHECK_STATUS(locus_engine_create_json("{\"floors\":\"\xff\xfe\"}", LOCUS_NUL_TERMINATED, NULL, &e) != LOCUS_OK, 1);

    CHECK_STATUS(locus_engine_create_file("/nonexistent/site.json", NULL, &e), LOCUS_E_FILE_UNREADABLE);
    CHECK_STATUS(locus_engine_create_file(NULL, NULL, &e), LOCUS_E_INVALID_ARGUMENT);

    locus_options o;
    memset(&o, 0, sizeof o);
    o.default_floor = "nope";
    CHECK_STATUS(locus_engine_create_file(site_path, &o, &e), LOCUS_E_UNKNOWN_FLOOR);
    memset(&o, 0, sizeof o);
    o.rate_hz = -1;
    CHECK_STATUS(locus_engine_create_file(site_path, &o, &e), LOCUS_E_INVALID_ARGUMENT);
    o.rate_hz = NAN;
    CHECK_STATUS(locus_engine_create_file(site_path, &o, &e), LOCUS_E_INVALID_ARGUMENT);
    memset(&o, 0, sizeof o);
    o.filter = 7;
    CHECK_STATUS(locus_engine_create_file(site_path, &o, &e), LOCUS_E_INVALID_ARGUMENT);
    memset(&o, 0, sizeof o);
    o.sigma_m = INFINITY;
    CHECK_STATUS(locus_engine_create_file(site_path, &o, &e), LOCUS_E_INVALID_ARGUMENT);
    memset(&o, 0, sizeof o);
    o.mode = 9;
    CHECK_STATUS(locus_engine_create_file(site_path, &o, &e), LOCUS_E_INVALID_ARGUMENT);
    CHECK(e == NULL, "out_engine set on failure");
}

static void test_engine_errors(void) {
    locus_engine *e = NULL;
    CHECK_STATUS(locus_engine_create_json(small_site, LOCUS_NUL_TERMINATED, NULL, &e), LOCUS_OK);
    if (!e) return;

    locus_range r;
    memset(&r, 0, sizeof r);
    r.tag = "T1";
    r.anchor = 1;
    r.range_m = 5.0;
    CHECK_STATUS(locus_engine_push(e, NULL), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_engine_push(NULL, &r), LOCUS_E_INVALID_ARGUMENT);
    r.t_s = 1.0;
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_OK);
    r.range_m = NAN;
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_INVALID_RANGE);
    r.range_m = INFINITY;
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_INVALID_RANGE);
    r.range_m = -0.5;
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_INVALID_RANGE);
    r.range_m = 5.0;
    r.t_s = NAN;
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_INVALID_RANGE);
    r.t_s = 1.0;
    r.floor = "9F";
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_UNKNOWN_FLOOR);
    r.floor = NULL;
    r.anchor = 0x9999;
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_INVALID_ARGUMENT);
    r.anchor = 2;
    r.t_s = 0.5;
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_CALL_ORDER); /* time going backwards for T1 */
    r.t_s = 1.0;
    r.tag = "";
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_INVALID_ARGUMENT);
    r.tag = "a-tag-id-that-is-much-longer-than-sixty-three-bytes-which-is-the-limit-of-the-C-API";
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_INVALID_ARGUMENT);
    r.tag = "\xc3\x28"; /* invalid UTF-8 */
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_INVALID_ARGUMENT);
    r.tag = "T1";

    /* an array with a bad row in the middle: the others are still used */
    locus_range batch[3];
    for (int i = 0; i < 3; ++i) { batch[i] = r; batch[i].anchor = (uint16_t)(2 + i); batch[i].t_s = 1.01 + 0.01 * i; }
    batch[1].range_m = NAN;
    size_t accepted = 99;
    CHECK_STATUS(locus_engine_push_ranges(e, batch, 3, &accepted), LOCUS_E_INVALID_RANGE);
    CHECK(accepted == 2, "accepted %zu", accepted);
    char message[256];
    locus_last_error_message(message, sizeof message);
    CHECK(strstr(message, "ranges[1]") != NULL, "message '%s'", message);
    CHECK_STATUS(locus_engine_push_ranges(e, NULL, 2, &accepted), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_engine_push_ranges(e, NULL, 0, NULL), LOCUS_OK);
    CHECK_STATUS(locus_engine_push_ranges(e, batch, (size_t)-1, NULL), LOCUS_E_INVALID_ARGUMENT);

    CHECK_STATUS(locus_engine_advance(e, NAN), LOCUS_E_INVALID_RANGE);
    CHECK_STATUS(locus_engine_advance(e, 2.0), LOCUS_OK);
    CHECK_STATUS(locus_engine_advance(e, 1.5), LOCUS_OK); /* earlier than the clock: ignored */

    locus_stats s;
    CHECK_STATUS(locus_engine_stats(e, &s), LOCUS_OK);
    CHECK(s.ranges_accepted == 3 && s.ranges_skipped == 8, "accepted %lld skipped %lld",
          (long long)s.ranges_accepted, (long long)s.ranges_skipped);
    CHECK_STATUS(locus_engine_stats(e, NULL), LOCUS_E_INVALID_ARGUMENT);

    size_t n = 7;
    locus_position positions[4];
    CHECK_STATUS(locus_engine_poll_positions(e, positions, 4, NULL), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_engine_poll_positions(e, NULL, 4, &n), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_engine_poll_positions(e, NULL, 0, &n), LOCUS_OK);
    CHECK(n == 0, "n %zu", n);
    CHECK_STATUS(locus_engine_poll_events(e, NULL, 3, &n), LOCUS_E_INVALID_ARGUMENT);

    CHECK_STATUS(locus_engine_finish(e), LOCUS_OK);
    CHECK_STATUS(locus_engine_finish(e), LOCUS_E_CALL_ORDER);
    r.t_s = 3.0;
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_CALL_ORDER);
    CHECK_STATUS(locus_engine_advance(e, 4.0), LOCUS_E_CALL_ORDER);
    CHECK_STATUS(locus_engine_poll_positions(e, positions, 4, &n), LOCUS_OK);

    CHECK_STATUS(locus_engine_destroy(e), LOCUS_OK);
    /* use after destroy: detected, no crash */
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_E_CALL_ORDER);
    CHECK_STATUS(locus_engine_poll_events(e, NULL, 0, &n), LOCUS_E_CALL_ORDER);
    CHECK_STATUS(locus_engine_destroy(e), LOCUS_E_CALL_ORDER);
    CHECK_STATUS(locus_engine_destroy(NULL), LOCUS_OK);
    /* a pointer that never was an engine */
    int not_an_engine = 0;
    CHECK_STATUS(locus_engine_finish((locus_engine *)&not_an_engine), LOCUS_E_CALL_ORDER);
}

static void test_formatting_errors(void) {
    locus_event ev;
    memset(&ev, 0, sizeof ev);
    ev.t_s = 12.25;
    ev.kind = LOCUS_EVENT_ENTER;
    strcpy(ev.tag, "T1");
    strcpy(ev.floor, "1F");
    strcpy(ev.zone, "entrance");
    char buf[256];
    size_t length = 0;
    CHECK_STATUS(locus_event_to_json(&ev, buf, sizeof buf, &length), LOCUS_OK);
    const char *want = "{\"t\": 12.250, \"tag\": \"T1\", \"floor\": \"1F\", \"zone\": \"entrance\", \"event\": \"enter\"}";
    CHECK(strcmp(buf, want) == 0 && length == strlen(want), "'%s' (%zu)", buf, length);
    ev.kind = LOCUS_EVENT_DWELL;
    ev.dwell_s = 5;
    CHECK_STATUS(locus_event_to_json(&ev, buf, sizeof buf, &length), LOCUS_OK);
    CHECK(strstr(buf, "\"event\": \"dwell\", \"dwellSeconds\": 5}") != NULL, "'%s'", buf);
    char small[10];
    CHECK_STATUS(locus_event_to_json(&ev, small, sizeof small, &length), LOCUS_E_INVALID_ARGUMENT);
    CHECK(length == strlen(buf), "needed %zu", length);
    CHECK_STATUS(locus_event_to_json(&ev, NULL, 0, &length), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_event_to_json(NULL, buf, sizeof buf, &length), LOCUS_E_INVALID_ARGUMENT);
    ev.kind = 17;
    CHECK_STATUS(locus_event_to_json(&ev, buf, sizeof buf, &length), LOCUS_E_INVALID_ARGUMENT);
    ev.kind = LOCUS_EVENT_EXIT;
    memset(ev.zone, 'z', sizeof ev.zone); /* no NUL */
    CHECK_STATUS(locus_event_to_json(&ev, buf, sizeof buf, &length), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_position_to_csv(NULL, buf, sizeof buf, &length), LOCUS_E_INVALID_ARGUMENT);
    CHECK(strncmp(locus_positions_csv_header(), "t,tag,x,y,z,", 12) == 0, "%s", locus_positions_csv_header());
}

static void square(locus_point p[4], double side, double z) {
    for (int i = 0; i < 4; ++i) {
        p[i].x_m = (i == 1 || i == 2) ? side : 0;
        p[i].y_m = (i >= 2) ? side : 0;
        p[i].z_m = z;
    }
}

static void test_solve_and_dop(void) {
    locus_point l[4];
    square(l, 10, 2.6);
    const double tx = 3, ty = 4, h = 1.1;
    double ranges[4];
    for (int i = 0; i < 4; ++i)
        ranges[i] = sqrt((tx - l[i].x_m) * (tx - l[i].x_m) + (ty - l[i].y_m) * (ty - l[i].y_m) + (h - 2.6) * (h - 2.6));
    locus_solve_options o;
    memset(&o, 0, sizeof o);
    o.tag_height_m = h;
    locus_fix f;
    CHECK_STATUS(locus_solve(l, ranges, 4, &o, &f), LOCUS_OK);
    CHECK(fabs(f.x_m - tx) < 1e-6 && fabs(f.y_m - ty) < 1e-6 && fabs(f.z_m - h) < 1e-12,
          "(%.9f, %.9f, %.9f)", f.x_m, f.y_m, f.z_m);
    CHECK(f.mode == LOCUS_MODE_PLANAR && f.anchors_used == 4 && f.rejected_count == 0, "mode %d used %d", f.mode, f.anchors_used);
    CHECK(f.covariance_m2[0] > 0 && f.covariance_m2[3] > 0 && f.covariance_m2[5] == 0 && f.hdop > 0, "cov");
    /* NLOS: one range 3 m long is rejected, the fix stays put (5 locators so one can go) */
    locus_point l5[5];
    square(l5, 10, 2.6);
    l5[4].x_m = 5; l5[4].y_m = 12; l5[4].z_m = 2.6;
    double r5[5];
    for (int i = 0; i < 5; ++i)
        r5[i] = sqrt((tx - l5[i].x_m) * (tx - l5[i].x_m) + (ty - l5[i].y_m) * (ty - l5[i].y_m) + 1.5 * 1.5);
    r5[2] += 3.0;
    CHECK_STATUS(locus_solve(l5, r5, 5, &o, &f), LOCUS_OK);
    CHECK(f.rejected_count == 1 && f.rejected_mask == 4u && fabs(f.x_m - tx) < 1e-6, "rejected %d mask %llu x %.6f",
          f.rejected_count, (unsigned long long)f.rejected_mask, f.x_m);
    o.no_outlier_rejection = 1;
    CHECK_STATUS(locus_solve(l5, r5, 5, &o, &f), LOCUS_OK);
    CHECK(f.rejected_count == 0 && fabs(f.x_m - tx) > 0.05, "plain LS moved by the NLOS range: x %.4f", f.x_m);
    o.no_outlier_rejection = 0;

    ranges[1] = NAN;
    CHECK_STATUS(locus_solve(l, ranges, 4, &o, &f), LOCUS_E_INVALID_RANGE);
    ranges[1] = 5;
    CHECK_STATUS(locus_solve(l, ranges, 2, &o, &f), LOCUS_E_TOO_FEW_RANGES);
    locus_point line[3] = {{0, 0, 2.6}, {5, 0, 2.6}, {10, 0, 2.6}};
    double lr[3] = {4, 3, 7};
    CHECK_STATUS(locus_solve(line, lr, 3, &o, &f), LOCUS_E_DEGENERATE_GEOMETRY);
    CHECK_STATUS(locus_solve(NULL, ranges, 4, &o, &f), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_solve(l, NULL, 4, &o, &f), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_solve(l, ranges, 4, &o, NULL), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_solve(l, ranges, 5000, &o, &f), LOCUS_E_INVALID_ARGUMENT);
    l[0].x_m = INFINITY;
    CHECK_STATUS(locus_solve(l, ranges, 4, &o, &f), LOCUS_E_INVALID_ARGUMENT);
    l[0].x_m = 0;
    o.sigma_m = -1;
    CHECK_STATUS(locus_solve(l, ranges, 4, &o, &f), LOCUS_E_INVALID_ARGUMENT);
    o.sigma_m = 0;

    /* DOP at the square's centre, planar: H rows are (d/r) times the unit directions at 45 degrees,
       so HtH = 2 (d/r)^2 I and HDOP = sqrt(2 / (2 (d/r)^2)) = r/d, d the half diagonal, r the 3-D distance. */
    locus_point centre = {5, 5, 0};
    locus_dop_result d;
    CHECK_STATUS(locus_dop(l, 4, &centre, &o, &d), LOCUS_OK);
    const double half = 5 * sqrt(2.0), r3 = sqrt(half * half + 1.5 * 1.5);
    CHECK(fabs(d.hdop - r3 / half) < 1e-9 && d.mode == LOCUS_MODE_PLANAR && d.vdop == 0, "hdop %.12f want %.12f",
          d.hdop, r3 / half);
    CHECK_STATUS(locus_dop(l, 1, &centre, &o, &d), LOCUS_E_TOO_FEW_RANGES);
    locus_point on_line = {20, 0, 0}; /* every line of sight along x */
    CHECK_STATUS(locus_dop(line, 3, &on_line, &o, &d), LOCUS_E_DEGENERATE_GEOMETRY);
    CHECK_STATUS(locus_dop(l, 4, NULL, &o, &d), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_dop(l, 4, &centre, NULL, &d), LOCUS_OK); /* NULL options: tag height 0, still defined */
}

/* The last error is per thread: a failure on another thread leaves this thread's record alone. */
static void *fail_on_other_thread(void *unused) {
    (void)unused;
    locus_engine *e;
    int status = locus_engine_create_json("[", LOCUS_NUL_TERMINATED, NULL, &e);
    return (void *)(size_t)(status == LOCUS_E_MALFORMED_JSON && locus_last_error_code() == LOCUS_E_MALFORMED_JSON);
}

static void test_thread_local_error(void) {
    locus_fix f;
    CHECK_STATUS(locus_solve(NULL, NULL, 0, NULL, &f), LOCUS_E_INVALID_ARGUMENT);
    pthread_t thread;
    void *result = NULL;
    CHECK(pthread_create(&thread, NULL, fail_on_other_thread, NULL) == 0, "pthread_create");
    pthread_join(thread, &result);
    CHECK(result != NULL, "other thread saw its own error");
    CHECK(locus_last_error_code() == LOCUS_E_INVALID_ARGUMENT, "this thread's error is %d", locus_last_error_code());
}

/* ------------------------------------------------------------------ replay against `locus replay` */

typedef struct {
    const char *site;
    const row *rows;
    size_t count;
    text positions, events;
    double max_struct_error_m;
    size_t fixes;
    int ok;
} replay_job;

static void drain(locus_engine *e, replay_job *job, size_t capacity) {
    locus_position p[16];
    locus_event ev[16];
    char line[1024];
    size_t n, length;
    do {
        n = 0;
        if (locus_engine_poll_positions(e, p, capacity, &n) != LOCUS_OK) { job->ok = 0; return; }
        for (size_t i = 0; i < n; ++i) {
            if (locus_position_to_csv(&p[i], line, sizeof line, &length) != LOCUS_OK) { job->ok = 0; return; }
            text_append(&job->positions, line, length);
            text_append(&job->positions, "\n", 1);
            /* The struct fields against the printed row (4 decimals): |printed - field| <= 0.5e-4. */
            double t, x, y, z;
            if (sscanf(line, "%lf,%*[^,],%lf,%lf,%lf", &t, &x, &y, &z) == 4) {
                double err = fmax(fmax(fabs(x - p[i].x_m), fabs(y - p[i].y_m)), fabs(z - p[i].z_m));
                if (err > job->max_struct_error_m) job->max_struct_error_m = err;
                if (fabs(t - p[i].t_s) > 0.5e-3 + 1e-12) job->ok = 0;
            }
            ++job->fixes;
        }
    } while (n == capacity);
    do {
        n = 0;
        if (locus_engine_poll_events(e, ev, capacity, &n) != LOCUS_OK) { job->ok = 0; return; }
        for (size_t i = 0; i < n; ++i) {
            if (locus_event_to_json(&ev[i], line, sizeof line, &length) != LOCUS_OK) { job->ok = 0; return; }
            text_append(&job->events, line, length);
            text_append(&job->events, "\n", 1);
        }
    } while (n == capacity);
}

/* Pushes the rows in uneven batches (1, 2, 3, ... 17 rows), ticks the clock between some batches
   and polls with small buffers: the output must not depend on any of it. */
static void *replay(void *argument) {
    replay_job *job = argument;
    job->ok = 1;
    locus_engine *e = NULL;
    if (locus_engine_create_file(job->site, NULL, &e) != LOCUS_OK) { job->ok = 0; return NULL; }
    text_append(&job->positions, locus_positions_csv_header(), strlen(locus_positions_csv_header()));
    text_append(&job->positions, "\n", 1);
    locus_range batch[17];
    locus_difference differences[17];
    size_t i = 0, size = 1;
    while (i < job->count) {
        /* A batch is a run of one kind: ranges (locus_engine_push_ranges) or differences (_differences). */
        size_t n = 0;
        const int kind = job->rows[i].is_difference;
        double last_t = 0;
        while (n < size && i < job->count && job->rows[i].is_difference == kind) {
            const row *r = &job->rows[i++];
            last_t = r->t;
            if (kind) {
                differences[n].t_s = r->t;
                differences[n].tdoa_m = r->range;
                differences[n].tag = r->tag;
                differences[n].floor = r->floor[0] ? r->floor : NULL;
                differences[n].anchor_a = (uint16_t)r->anchor;
                differences[n].anchor_b = (uint16_t)r->anchor_b;
            } else {
                batch[n].t_s = r->t;
                batch[n].range_m = r->range;
                batch[n].tag = r->tag;
                batch[n].floor = r->floor[0] ? r->floor : NULL;
                batch[n].anchor = (uint16_t)r->anchor;
            }
            ++n;
        }
        size_t accepted = 0;
        int status = kind ? locus_engine_push_differences(e, differences, n, &accepted) : locus_engine_push_ranges(e, batch, n, &accepted);
        if (status != LOCUS_OK || accepted != n) job->ok = 0;
        if (size % 5 == 0 && locus_engine_advance(e, last_t) != LOCUS_OK) job->ok = 0;
        if (size % 3 == 0) drain(e, job, 1 + size % 4);
        size = size % 17 + 1;
    }
    if (locus_engine_finish(e) != LOCUS_OK) job->ok = 0;
    drain(e, job, 16);
    locus_stats s;
    if (locus_engine_stats(e, &s) != LOCUS_OK || s.pending_positions != 0 || s.pending_events != 0) job->ok = 0;
    if (locus_engine_destroy(e) != LOCUS_OK) job->ok = 0;
    return NULL;
}

static void compare_text(const char *what, const text *got, const char *expected_path) {
    size_t length = 0;
    char *expected = read_file(expected_path, &length);
    CHECK(expected != NULL, "cannot read %s", expected_path);
    if (!expected) return;
    int same = got->length == length && memcmp(got->data, expected, length) == 0;
    if (!same) {
        size_t k = 0;
        while (k < length && k < got->length && got->data[k] == expected[k]) ++k;
        size_t start = k > 60 ? k - 60 : 0;
        fprintf(stderr, "%s differ at byte %zu:\n  got:      %.120s\n  expected: %.120s\n", what, k,
                got->data + start, expected + start);
    }
    CHECK(same, "%s: %zu bytes vs %zu in %s", what, got->length, length, expected_path);
    free(expected);
}

/* ------------------------------------------------------------------ calibration without truth */

/* The hall fixture's locators (Fixtures/sites/hall.json): addresses 0x9DD7..0x9DDE. */
static const double hall_locators[8][3] = {{0.3, 0.3, 2.6}, {20.0, 0.3, 2.6}, {39.7, 0.3, 2.6}, {39.7, 12.5, 2.6},
                                           {39.7, 24.7, 2.6}, {20.0, 24.7, 2.6}, {0.3, 24.7, 2.6}, {0.3, 12.5, 2.55}};

/* A tag circling the hall at 1.1 m for 2 min at 4 Hz, ranging every locator with bias 0.03*i m and a
 * few millimetres of deterministic noise; locus_calibrate must give the biases back. */
/* Partitions: set before the first range, a valid index; tag indices in order of first appearance. */
static void test_partition(const char *site_path) {
    locus_engine *e = NULL;
    CHECK_STATUS(locus_engine_create_file(site_path, NULL, &e), LOCUS_OK);
    if (!e) return;
    CHECK_STATUS(locus_engine_set_partition(e, 2, 2), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_engine_set_partition(e, 0, 0), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_engine_set_partition(e, 1, 2), LOCUS_OK);
    int64_t index = -1;
    CHECK_STATUS(locus_engine_tag_index(e, "T9", &index), LOCUS_E_INVALID_ARGUMENT);
    locus_range r = {1.0, 5.0, "T9", NULL, 0x9DD7};
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_OK);
    r.tag = "T3";
    CHECK_STATUS(locus_engine_push(e, &r), LOCUS_OK);
    CHECK_STATUS(locus_engine_tag_index(e, "T3", &index), LOCUS_OK);
    CHECK(index == 1, "T3 is the second tag seen, index %lld", (long long)index);
    CHECK_STATUS(locus_engine_set_partition(e, 0, 2), LOCUS_E_CALL_ORDER);
    CHECK_STATUS(locus_engine_tag_index(e, NULL, &index), LOCUS_E_INVALID_ARGUMENT);
    locus_engine_destroy(e);
}

/* The whole runs as typed calls: replay a file to outputs with its summary, the engine's own summary
   of pushed rows (the same object), geometry and calibration summaries, and their errors. */
static void test_whole_runs(const char *site_path, const char *trace_path) {
    char positions[256], events[256];
    snprintf(positions, sizeof positions, "/tmp/locus_c_test_%d_positions.csv", (int)getpid());
    snprintf(events, sizeof events, "/tmp/locus_c_test_%d_events.jsonl", (int)getpid());
    locus_replay_request request = {0};
    request.site_path = site_path;
    request.trace_path = trace_path;
    request.positions_path = positions;
    request.events_path = events;
    request.jobs = 2;
    char *summary = NULL, *notes = NULL;
    int verdict = -1;
    CHECK_STATUS(locus_replay_file(&request, NULL, &summary, &notes, &verdict), LOCUS_OK);
    CHECK(summary != NULL && strstr(summary, "\"fixes\":") != NULL && strstr(summary, "\"filter\":\"kalman\"") != NULL,
          "replay summary: %s", summary ? summary : "(null)");
    CHECK(verdict == 0 && notes != NULL && notes[0] == 0, "replay verdict %d, notes '%s'", verdict, notes ? notes : "(null)");
    size_t length = 0;
    char *written = read_file(positions, &length);
    CHECK(written != NULL && length > 100 && strncmp(written, "t,tag,", 6) == 0, "positions written: %zu bytes", length);
    free(written);
    /* The engine handle's summary of the same rows: the same counts. */
    locus_engine *e = NULL;
    CHECK_STATUS(locus_engine_create_file(site_path, NULL, &e), LOCUS_OK);
    char *early = NULL;
    CHECK_STATUS(locus_engine_summary(e, &early, NULL, NULL), LOCUS_E_CALL_ORDER);
    CHECK(early == NULL, "no summary before finish");
    CHECK_STATUS(locus_engine_push_trace_file(e, trace_path, NULL, NULL), LOCUS_OK);
    CHECK_STATUS(locus_engine_set_truth(e, trace_path, 0), LOCUS_E_CALL_ORDER);
    CHECK_STATUS(locus_engine_finish(e), LOCUS_OK);
    char *engine_summary = NULL;
    CHECK_STATUS(locus_engine_summary(e, &engine_summary, NULL, &verdict), LOCUS_OK);
    const char *fixes_a = summary ? strstr(summary, "\"fixes\":") : NULL;
    const char *fixes_b = engine_summary ? strstr(engine_summary, "\"fixes\":") : NULL;
    CHECK(fixes_a && fixes_b && strncmp(fixes_a, fixes_b, strcspn(fixes_a, "}")) == 0 && verdict == 0,
          "engine summary agrees with the replay's up to the timings: %s", engine_summary ? engine_summary : "(null)");
    locus_free(engine_summary);
    locus_engine_destroy(e);
    locus_free(summary);
    locus_free(notes);
    /* A trace from another site: the run gives no fix, verdict 1 with the reason, and the outputs
       written before stay as they were (written aside, put in place only by a run that passed). */
    char foreign[256];
    snprintf(foreign, sizeof foreign, "/tmp/locus_c_test_%d_foreign.csv", (int)getpid());
    FILE *f = fopen(foreign, "w");
    CHECK(f != NULL, "create %s", foreign);
    if (f) { fputs("t,anchor,range_m,tag\n0,999,1.0,a\n0.25,998,2.0,a\n", f); fclose(f); }
    size_t before_length = 0, after_length = 0;
    char *before = read_file(positions, &before_length);
    request.trace_path = foreign;
    CHECK_STATUS(locus_replay_file(&request, NULL, &summary, &notes, &verdict), LOCUS_OK);
    CHECK(verdict == 1 && notes != NULL && strstr(notes, "unknown_anchor") != NULL, "foreign verdict %d, notes '%s'", verdict,
          notes ? notes : "(null)");
    char *after = read_file(positions, &after_length);
    CHECK(before && after && before_length == after_length && memcmp(before, after, before_length) == 0,
          "a failed run leaves the positions file as it was (%zu -> %zu bytes)", before_length, after_length);
    free(before);
    free(after);
    locus_free(summary);
    locus_free(notes);
    remove(foreign);
    request.trace_path = "/nonexistent/trace.csv";
    CHECK_STATUS(locus_replay_file(&request, NULL, &summary, &notes, &verdict), LOCUS_E_FILE_UNREADABLE);
    CHECK(summary == NULL && notes == NULL, "nothing allocated on an error");
    request.trace_path = trace_path;
    request.report_path = "/tmp/never.svg";
    CHECK_STATUS(locus_replay_file(&request, NULL, &summary, &notes, &verdict), LOCUS_E_USAGE);
    request.report_path = NULL;
    request.flags = 4;
    CHECK_STATUS(locus_replay_file(&request, NULL, &summary, &notes, &verdict), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_replay_file(NULL, NULL, &summary, &notes, &verdict), LOCUS_E_INVALID_ARGUMENT);
    remove(positions);
    remove(events);

    locus_geometry_request geometry = {0};
    geometry.site_path = site_path;
    geometry.grid_m = 1.0;
    geometry.flags = LOCUS_GEOMETRY_SUGGEST;
    char *map = NULL;
    CHECK_STATUS(locus_geometry(&geometry, &map), LOCUS_OK);
    CHECK(map != NULL && strstr(map, "\"hdop_p95\":") != NULL && strstr(map, "\"suggestion\":") != NULL,
          "geometry summary: %s", map ? map : "(null)");
    locus_free(map);
    geometry.floor = "nowhere";
    CHECK_STATUS(locus_geometry(&geometry, &map), LOCUS_E_UNKNOWN_FLOOR);
    geometry.floor = NULL;
    geometry.grid_m = -1;
    CHECK_STATUS(locus_geometry(&geometry, &map), LOCUS_E_INVALID_ARGUMENT);

    locus_calibrate_request calibrate = {0};
    calibrate.site_path = site_path;
    calibrate.trace_path = trace_path;
    calibrate.estimator = LOCUS_ESTIMATOR_MEDIAN;
    CHECK_STATUS(locus_calibrate_file(&calibrate, &summary, &notes, &verdict), LOCUS_E_USAGE);
    calibrate.estimator = 9;
    CHECK_STATUS(locus_calibrate_file(&calibrate, &summary, &notes, &verdict), LOCUS_E_INVALID_ARGUMENT);
    /* Without truth, a calibration of the site the walk was simulated on is not shown better on the
       held-out blocks: out_path not written, verdict 1, the notes say how to write it anyway. */
    char calibrated[256];
    snprintf(calibrated, sizeof calibrated, "/tmp/locus_c_test_%d_calibrated.json", (int)getpid());
    remove(calibrated);
    calibrate.estimator = LOCUS_ESTIMATOR_DEFAULT;
    calibrate.out_path = calibrated;
    CHECK_STATUS(locus_calibrate_file(&calibrate, &summary, &notes, &verdict), LOCUS_OK);
    CHECK(verdict == 1 && notes && strstr(notes, "not shown better") && strstr(notes, "LOCUS_CALIBRATE_NO_HOLDOUT"),
          "unproven calibration: verdict %d, notes '%s'", verdict, notes ? notes : "(null)");
    CHECK(summary && strstr(summary, "\"refused\":\"unproven\"") && strstr(summary, "\"block_s\":10"),
          "unproven summary: %s", summary ? summary : "(null)");
    char *not_written = read_file(calibrated, &length);
    CHECK(not_written == NULL, "an unproven calibration is not written");
    free(not_written);
    locus_free(summary);
    locus_free(notes);
    /* The block length (`--holdout-block 5`). */
    calibrate.holdout_block_ms = 5000;
    CHECK_STATUS(locus_calibrate_file(&calibrate, &summary, &notes, &verdict), LOCUS_OK);
    CHECK(summary && strstr(summary, "\"block_s\":5,"), "5 s blocks: %s", summary ? summary : "(null)");
    locus_free(summary);
    locus_free(notes);
    /* Both at once is a contradiction; a day and a millisecond more is out of range. */
    calibrate.flags = LOCUS_CALIBRATE_NO_HOLDOUT;
    CHECK_STATUS(locus_calibrate_file(&calibrate, &summary, &notes, &verdict), LOCUS_E_INVALID_ARGUMENT);
    calibrate.flags = 0;
    calibrate.holdout_block_ms = 86400001u;
    CHECK_STATUS(locus_calibrate_file(&calibrate, &summary, &notes, &verdict), LOCUS_E_INVALID_ARGUMENT);
    /* `--holdout-block 0`: no validation, written as fitted. */
    calibrate.holdout_block_ms = 0;
    calibrate.flags = LOCUS_CALIBRATE_NO_HOLDOUT;
    CHECK_STATUS(locus_calibrate_file(&calibrate, &summary, &notes, &verdict), LOCUS_OK);
    CHECK(verdict == 0 && summary && strstr(summary, "\"validation\":null"), "no validation: verdict %d, %s", verdict,
          summary ? summary : "(null)");
    char *site_written = read_file(calibrated, &length);
    CHECK(site_written && strstr(site_written, "\"biasM\""), "written without the validation");
    free(site_written);
    locus_free(summary);
    locus_free(notes);
    remove(calibrated);
    calibrate.flags = 8;
    CHECK_STATUS(locus_calibrate_file(&calibrate, &summary, &notes, &verdict), LOCUS_E_INVALID_ARGUMENT);
    locus_free(NULL);
    printf("whole runs: replay, engine summary, geometry and calibrate through typed calls\n");
}

static void test_calibrate(const char *site_path) {
    size_t site_length = 0;
    char *site = read_file(site_path, &site_length);
    CHECK(site != NULL, "cannot read %s", site_path);
    if (!site) return;
    enum { rounds = 480 };
    locus_range *ranges = calloc(rounds * 8, sizeof *ranges);
    for (int k = 0; k < rounds; ++k) {
        double angle = 0.02 * k, x = 20 + 14 * cos(angle), y = 12.5 + 8 * sin(3 * angle);
        for (int i = 0; i < 8; ++i) {
            double dx = x - hall_locators[i][0], dy = y - hall_locators[i][1], dz = 1.1 - hall_locators[i][2];
            locus_range *r = &ranges[k * 8 + i];
            r->t_s = 0.25 * k + 0.004 * i;
            r->range_m = sqrt(dx * dx + dy * dy + dz * dz) + 0.03 * i + 0.004 * (((k * 7 + i * 3) % 11) - 5);
            r->tag = "T1";
            r->anchor = (uint16_t)(0x9DD7 + i);
        }
    }
    locus_locator_calibration results[8];
    locus_calibration_summary summary;
    size_t written = 0;
    /* Too small a result array: the summary says how many are needed. */
    CHECK_STATUS(locus_calibrate(site, site_length, ranges, rounds * 8, NULL, results, 2, &summary, NULL, 0, &written),
                 LOCUS_E_INVALID_ARGUMENT);
    CHECK(summary.locators == 8, "summary.locators %lld", (long long)summary.locators);
    CHECK_STATUS(locus_calibrate(NULL, 0, ranges, rounds * 8, NULL, results, 8, &summary, NULL, 0, &written), LOCUS_E_INVALID_ARGUMENT);
    /* The site's size first, then the site. */
    CHECK_STATUS(locus_calibrate(site, site_length, ranges, rounds * 8, NULL, results, 8, &summary, NULL, 0, &written), LOCUS_OK);
    char *out = malloc(written + 1);
    CHECK_STATUS(locus_calibrate(site, site_length, ranges, rounds * 8, NULL, results, 8, &summary, out, written + 1, &written), LOCUS_OK);
    CHECK(summary.estimated == 8 && summary.flagged == 0 && summary.common_offset_separable == 1,
          "estimated %lld, flagged %lld, separable %d", (long long)summary.estimated, (long long)summary.flagged,
          summary.common_offset_separable);
    CHECK(summary.residual_rms_m > 0 && summary.residual_rms_m < 0.02, "residual RMS %g", summary.residual_rms_m);
    double worst = 0;
    for (int i = 0; i < 8; ++i) {
        CHECK(results[i].address == 0x9DD7 + i && (results[i].flags & LOCUS_CALIBRATION_ESTIMATED)
              && (results[i].flags & LOCUS_CALIBRATION_CHECKED) && !(results[i].flags & LOCUS_CALIBRATION_FLAGGED)
              && strcmp(results[i].floor, "1F") == 0 && results[i].ranges == rounds,
              "locator %d: address %x flags %d floor %s ranges %lld", i, results[i].address, results[i].flags, results[i].floor,
              (long long)results[i].ranges);
        double e = fabs(results[i].bias_m - 0.03 * i);
        if (e > worst) worst = e;
    }
    CHECK(worst < 0.01, "largest bias error %g m", worst);
    CHECK(out && strstr(out, "\"biasM\"") != NULL, "the calibrated site carries biasM");
    printf("calibrate: 8 biases within %.1f mm, residual RMS %.1f mm, site %zu bytes\n", 1000 * worst, 1000 * summary.residual_rms_m,
           written);

    /* The held-out validation (ABI 0.3): 2 min in blocks of 10 s, 6 held out, the biases shown better. */
    locus_calibration_validation validation;
    memset(&validation, 0x5A, sizeof validation);
    size_t validated_length = 0;
    char *validated = malloc(written + 1);
    CHECK_STATUS(locus_calibrate_validated(site, site_length, ranges, rounds * 8, NULL, results, 8, &summary, &validation,
                                           validated, written + 1, &validated_length), LOCUS_OK);
    CHECK(validation.verdict == LOCUS_CALIBRATION_ACCEPTED && validation.blocks == 12 && validation.held_out_blocks == 6
          && validation.moved == 0 && validation.block_s == 10 && validation.fit_ranges + validation.held_out_ranges == rounds * 8
          && validation.held_out_ranges == 6 * 40 * 8 && validation.scored >= 100 && validation.reason[0] == 0,
          "validation: verdict %d, %d blocks (%d held out) of %g s, %lld + %lld ranges, %lld scored, reason '%.80s'",
          validation.verdict, validation.blocks, validation.held_out_blocks, validation.block_s, (long long)validation.fit_ranges,
          (long long)validation.held_out_ranges, (long long)validation.scored, validation.reason);
    CHECK(validation.calibrated_m > 0 && validation.calibrated_m < 0.5 * validation.surveyed_m,
          "held-out median residual %g m as surveyed, %g calibrated", validation.surveyed_m, validation.calibrated_m);
    CHECK(validated_length == written && out && memcmp(validated, out, written + 1) == 0,
          "locus_calibrate and locus_calibrate_validated write the same accepted site");
    printf("calibrate: held out %d of %d blocks, median |range residual| %.1f -> %.1f mm: accepted\n", validation.held_out_blocks,
           validation.blocks, 1000 * validation.surveyed_m, 1000 * validation.calibrated_m);

    /* The biases already in the site: nothing to gain, so not shown better: site_out is the site as given. */
    char *biased = malloc(written + 1);
    memcpy(biased, out, written + 1);
    locus_calibration_options no_holdout = {NULL, 0, 0, 0, LOCUS_CALIBRATION_NO_HOLDOUT};
    size_t again_length = 0;
    CHECK_STATUS(locus_calibrate_validated(biased, written, ranges, rounds * 8, NULL, results, 8, &summary, &validation, NULL, 0,
                                           &again_length), LOCUS_OK);
    char *again = malloc(again_length + 1);
    CHECK_STATUS(locus_calibrate_validated(biased, written, ranges, rounds * 8, NULL, results, 8, &summary, &validation, again,
                                           again_length + 1, &again_length), LOCUS_OK);
    CHECK(validation.verdict == LOCUS_CALIBRATION_UNPROVEN && strstr(validation.reason, "not shown better") != NULL
          && validation.surveyed_m > 0 && validation.calibrated_m > 0,
          "a calibrated site recalibrated: verdict %d, %g -> %g m, reason '%.120s'", validation.verdict, validation.surveyed_m,
          validation.calibrated_m, validation.reason);
    CHECK(again_length == written && memcmp(again, biased, written) == 0, "unproven: site_out is the site as given");
    /* LOCUS_CALIBRATION_NO_HOLDOUT: the fit as it is, not validated. */
    CHECK_STATUS(locus_calibrate_validated(biased, written, ranges, rounds * 8, &no_holdout, results, 8, &summary, &validation,
                                           NULL, 0, &again_length), LOCUS_OK);
    CHECK(validation.verdict == LOCUS_CALIBRATION_NOT_VALIDATED && validation.blocks == 0 && validation.reason[0] == 0,
          "no holdout: verdict %d, %d blocks", validation.verdict, validation.blocks);
    /* A recording too short to judge (15 s: one held-out block) is unproven, saying how to get it written. */
    CHECK_STATUS(locus_calibrate_validated(site, site_length, ranges, 60 * 8, NULL, results, 8, &summary, &validation, NULL, 0,
                                           &again_length), LOCUS_OK);
    CHECK(validation.verdict == LOCUS_CALIBRATION_UNPROVEN && validation.held_out_blocks == 1
          && strstr(validation.reason, "record longer") != NULL && validation.surveyed_m == 0,
          "15 s: verdict %d, %d held out, reason '%.120s'", validation.verdict, validation.held_out_blocks, validation.reason);
    /* holdout_block_ms out of range. */
    locus_calibration_options bad = {NULL, 0, 0, 0, -2};
    CHECK_STATUS(locus_calibrate_validated(site, site_length, ranges, rounds * 8, &bad, results, 8, &summary, &validation, NULL, 0,
                                           &again_length), LOCUS_E_INVALID_ARGUMENT);
    bad.holdout_block_ms = 86400001;
    CHECK_STATUS(locus_calibrate(site, site_length, ranges, rounds * 8, &bad, results, 8, &summary, NULL, 0, &again_length),
                 LOCUS_E_INVALID_ARGUMENT);
    free(again);
    free(biased);
    free(validated);
    free(out);
    free(ranges);
    free(site);
}

/* ------------------------------------------------------------------ trace files */

/* locus_engine_push_trace_file gives `locus replay`'s bytes, and a trace with bad rows is read with
   them skipped and counted by reason (locus_engine_skipped), never as a failure. */
static void test_trace_file(const char *site, const char *trace, const char *expected_positions,
                            const char *expected_events) {
    replay_job job;
    memset(&job, 0, sizeof job);
    job.ok = 1;
    locus_engine *e = NULL;
    CHECK_STATUS(locus_engine_create_file(site, NULL, &e), LOCUS_OK);
    if (!e) return;
    size_t rows = 0, accepted = 0;
    CHECK_STATUS(locus_engine_push_trace_file(e, trace, &rows, &accepted), LOCUS_OK);
    CHECK(rows > 0 && accepted == rows, "rows %zu, accepted %zu", rows, accepted);
    CHECK_STATUS(locus_engine_finish(e), LOCUS_OK);
    text_append(&job.positions, locus_positions_csv_header(), strlen(locus_positions_csv_header()));
    text_append(&job.positions, "\n", 1);
    drain(e, &job, 16);
    CHECK(job.ok, "drain failed");
    compare_text("positions (trace file)", &job.positions, expected_positions);
    compare_text("events (trace file)", &job.events, expected_events);
    CHECK_STATUS(locus_engine_push_trace_file(e, trace, NULL, NULL), LOCUS_E_CALL_ORDER);
    CHECK_STATUS(locus_engine_destroy(e), LOCUS_OK);
    free(job.positions.data);
    free(job.events.data);

    /* Bad rows: skipped and counted by reason. */
    char path[] = "/tmp/locus_c_test_traceXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0) return;
    FILE *f = fdopen(fd, "w");
    fputs("t,tag,anchor,range_m,floor\n"
          "0.0,T1,40407,10.1,1F\n"
          "0.1,T1,40407,garbage,1F\n"
          "0.2,T1,0xZZZZ,10.1,1F\n"
          "0.3,T1,40407,-1.0,1F\n"
          "0.4,T1,40407,10.1,9F\n", f);
    fclose(f);
    CHECK_STATUS(locus_engine_create_file(site, NULL, &e), LOCUS_OK);
    CHECK_STATUS(locus_engine_push_trace_file(e, path, &rows, &accepted), LOCUS_OK);
    CHECK(rows == 5 && accepted == 1, "rows %zu, accepted %zu", rows, accepted);
    int64_t skipped[LOCUS_SKIP_REASON_COUNT + 1];
    memset(skipped, 0xff, sizeof skipped);
    CHECK_STATUS(locus_engine_skipped(e, skipped, LOCUS_SKIP_REASON_COUNT), LOCUS_OK);
    CHECK(skipped[LOCUS_SKIP_UNPARSEABLE_NUMBER] == 1 && skipped[LOCUS_SKIP_INVALID_ANCHOR] == 1
          && skipped[LOCUS_SKIP_NEGATIVE_RANGE] == 1 && skipped[LOCUS_SKIP_UNKNOWN_FLOOR] == 1
          && skipped[LOCUS_SKIP_REASON_COUNT] == -1,
          "skipped unparseable %lld, invalid anchor %lld, negative %lld, unknown floor %lld",
          (long long)skipped[1], (long long)skipped[2], (long long)skipped[6], (long long)skipped[4]);
    locus_stats st;
    CHECK_STATUS(locus_engine_stats(e, &st), LOCUS_OK);
    CHECK(st.ranges_skipped == 4, "ranges_skipped %lld", (long long)st.ranges_skipped);
    CHECK_STATUS(locus_engine_skipped(e, NULL, 3), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_engine_push_trace_file(e, NULL, NULL, NULL), LOCUS_E_INVALID_ARGUMENT);
    CHECK_STATUS(locus_engine_push_trace_file(e, "/nonexistent/trace.csv", NULL, NULL), LOCUS_E_FILE_UNREADABLE);
    CHECK_STATUS(locus_engine_destroy(e), LOCUS_OK);
    remove(path);
    printf("trace file: %zu rows pushed by the library's reader, bad rows counted by reason\n", (size_t)5);
}

/* A range-difference (TDoA) trace pushed with locus_engine_push_differences in uneven batches on two
   threads gives `locus replay`'s bytes; bad differences return their statuses. */
static void test_difference_trace(const char *site, const char *trace, const char *expected_positions,
                                  const char *expected_events) {
    size_t count = 0;
    row *rows = read_trace(trace, &count);
    CHECK(rows != NULL && count > 0, "cannot read difference trace %s", trace);
    if (!rows) return;
    replay_job jobs[2];
    memset(jobs, 0, sizeof jobs);
    pthread_t threads[2];
    for (int k = 0; k < 2; ++k) {
        jobs[k].site = site;
        jobs[k].rows = rows;
        jobs[k].count = count;
        CHECK(pthread_create(&threads[k], NULL, replay, &jobs[k]) == 0, "pthread_create");
    }
    for (int k = 0; k < 2; ++k) pthread_join(threads[k], NULL);
    for (int k = 0; k < 2; ++k) {
        CHECK(jobs[k].ok, "difference replay %d reported a failure", k);
        CHECK(jobs[k].fixes > 0, "no fixes from differences");
        compare_text("difference positions", &jobs[k].positions, expected_positions);
        compare_text("difference events", &jobs[k].events, expected_events);
    }
    printf("differences: %zu rows -> %zu positions\n", count, jobs[0].fixes);
    for (int k = 0; k < 2; ++k) { free(jobs[k].positions.data); free(jobs[k].events.data); }

    locus_engine *e = NULL;
    CHECK_STATUS(locus_engine_create_file(site, NULL, &e), LOCUS_OK);
    if (e) {
        locus_difference d = {rows[0].t, 0.5, "D1", NULL, (uint16_t)rows[0].anchor, (uint16_t)rows[0].anchor};
        CHECK_STATUS(locus_engine_push_difference(e, NULL), LOCUS_E_INVALID_ARGUMENT);
        CHECK_STATUS(locus_engine_push_difference(e, &d), LOCUS_E_INVALID_ARGUMENT);       /* A = B */
        d.anchor_b = (uint16_t)rows[0].anchor_b;
        d.tdoa_m = 1e4;
        CHECK_STATUS(locus_engine_push_difference(e, &d), LOCUS_E_INVALID_RANGE);          /* beyond the baseline */
        d.tdoa_m = NAN;
        CHECK_STATUS(locus_engine_push_difference(e, &d), LOCUS_E_INVALID_RANGE);
        d.tdoa_m = 0.25;
        d.anchor_b = 1;
        CHECK_STATUS(locus_engine_push_difference(e, &d), LOCUS_E_INVALID_ARGUMENT);       /* unknown locator */
        d.anchor_b = (uint16_t)rows[0].anchor_b;
        CHECK_STATUS(locus_engine_push_difference(e, &d), LOCUS_OK);
        int64_t skipped[LOCUS_SKIP_REASON_COUNT];
        CHECK_STATUS(locus_engine_skipped(e, skipped, LOCUS_SKIP_REASON_COUNT), LOCUS_OK);
        CHECK(skipped[LOCUS_SKIP_SAME_LOCATOR] == 1 && skipped[LOCUS_SKIP_DIFFERENCE_TOO_LONG] == 1
              && skipped[LOCUS_SKIP_NON_FINITE] == 1 && skipped[LOCUS_SKIP_UNKNOWN_ANCHOR] == 1,
              "skips %lld %lld %lld %lld", (long long)skipped[LOCUS_SKIP_SAME_LOCATOR],
              (long long)skipped[LOCUS_SKIP_DIFFERENCE_TOO_LONG], (long long)skipped[LOCUS_SKIP_NON_FINITE],
              (long long)skipped[LOCUS_SKIP_UNKNOWN_ANCHOR]);
        locus_engine_destroy(e);
    }
    free(rows);
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 9) {
        fprintf(stderr, "usage: %s SITE TRACE EXPECTED_POSITIONS EXPECTED_EVENTS EXPECTED_VERSION "
                "[TDOA_TRACE TDOA_POSITIONS TDOA_EVENTS]\n", argv[0]);
        return 2;
    }
    test_version(argv[5]);
    test_status_names();
    test_create_errors(argv[1]);
    test_engine_errors();
    test_formatting_errors();
    test_solve_and_dop();
    test_thread_local_error();
    test_calibrate(argv[1]);
    test_partition(argv[1]);
    test_whole_runs(argv[1], argv[2]);

    size_t count = 0;
    row *rows = read_trace(argv[2], &count);
    CHECK(rows != NULL && count > 0, "cannot read trace %s", argv[2]);
    if (rows) {
        /* Two engines on two threads at once, each must give `locus replay`'s bytes. */
        replay_job jobs[2];
        memset(jobs, 0, sizeof jobs);
        pthread_t threads[2];
        for (int k = 0; k < 2; ++k) {
            jobs[k].site = argv[1];
            jobs[k].rows = rows;
            jobs[k].count = count;
            CHECK(pthread_create(&threads[k], NULL, replay, &jobs[k]) == 0, "pthread_create");
        }
        for (int k = 0; k < 2; ++k) pthread_join(threads[k], NULL);
        for (int k = 0; k < 2; ++k) {
            CHECK(jobs[k].ok, "replay %d reported a failure", k);
            CHECK(jobs[k].fixes > 0, "no fixes");
            CHECK(jobs[k].max_struct_error_m <= 0.5e-4 + 1e-9, "struct vs printed: %.3g m", jobs[k].max_struct_error_m);
            compare_text("positions", &jobs[k].positions, argv[3]);
            compare_text("events", &jobs[k].events, argv[4]);
        }
        printf("replay: %zu ranges -> %zu positions, %zu event bytes; struct vs CSV max %.2g m\n", count,
               jobs[0].fixes, jobs[0].events.length, jobs[0].max_struct_error_m);
        for (int k = 0; k < 2; ++k) { free(jobs[k].positions.data); free(jobs[k].events.data); }
        free(rows);
    }
    test_trace_file(argv[1], argv[2], argv[3], argv[4]);
    if (argc == 9) test_difference_trace(argv[1], argv[6], argv[7], argv[8]);
    printf("locus_c_test: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
