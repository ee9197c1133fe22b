/*
 * locus_c_bench — time through the C API: a synthetic tag walking in the hall site (8 locators,
 * 4 Hz rounds of 8 ranges), pushed in rounds with push_ranges and polled every 16 rounds, with the
 * default (Kalman, tight) engine. Prints ns per range and per position; asserts only correctness
 * (every round gives a position). Not a gate: build with -O2 against the release library.
 *
 * usage: locus_c_bench SITE [ROUNDS]      (SITE: Fixtures/sites/hall.json)
 */
#include "locus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s SITE [ROUNDS]\n", argv[0]); return 2; }
    const int rounds = argc > 2 ? atoi(argv[2]) : 20000;
    static const uint16_t address[8] = {40407, 40408, 40409, 40410, 40411, 40412, 40413, 40414};
    static const double lx[8] = {0.3, 20, 39.7, 39.7, 39.7, 20, 0.3, 0.3};
    static const double ly[8] = {0.3, 0.3, 0.3, 12.5, 24.7, 24.7, 24.7, 12.5};
    locus_engine *e = NULL;
    if (locus_engine_create_file(argv[1], NULL, &e) != LOCUS_OK) {
        char message[512];
        locus_last_error_message(message, sizeof message);
        fprintf(stderr, "%s\n", message);
        return 1;
    }
    locus_range round_ranges[8];
    locus_position positions[64];
    size_t n = 0, total = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int k = 0; k < rounds; ++k) {
        const double t = 0.25 * k, x = 10 + 5 * (k % 40) / 40.0, y = 12;
        for (int i = 0; i < 8; ++i) {
            const double dx = x - lx[i], dy = y - ly[i];
            round_ranges[i].t_s = t + 0.004 * i;
            round_ranges[i].range_m = sqrt(dx * dx + dy * dy + 1.5 * 1.5); /* tag 1.1 m, locators 2.6 m */
            round_ranges[i].tag = "T1";
            round_ranges[i].floor = NULL;
            round_ranges[i].anchor = address[i];
        }
        if (locus_engine_push_ranges(e, round_ranges, 8, NULL) != LOCUS_OK) return 1;
        if (k % 16 == 0) do { locus_engine_poll_positions(e, positions, 64, &n); total += n; } while (n == 64);
    }
    locus_engine_finish(e);
    do { locus_engine_poll_positions(e, positions, 64, &n); total += n; } while (n == 64);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    locus_engine_destroy(e);
    const double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("{\"bench\":\"c_api_push_poll\",\"ranges\":%d,\"positions\":%zu,\"ns_per_range\":%.0f,\"ns_per_position\":%.0f}\n",
           8 * rounds, total, 1e9 * seconds / (8.0 * rounds), total ? 1e9 * seconds / (double)total : 0.0);
    return total + 2 >= (size_t)rounds ? 0 : 1; /* the filter needs a round or two to start its track */
}
