// Bit-identity of the IMM kernel across instruction sets (scripts/test-c builds this with
// Sources/CLocusKernels/imm.c twice, -mavx and -mno-avx, LOCUS_IMM_NO_CLONES): a seeded walk of
// predictions, range and position updates; every output number is printed in hexadecimal floating
// point, so the two builds' outputs compare byte for byte.
#include "locus_imm.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF // (gcc: build with -ffp-contract=off)
#endif

static uint64_t state = 0x9E3779B97F4A7C15ull;
static double unit(void) { // xorshift64*, [0, 1)
    state ^= state >> 12; state ^= state << 25; state ^= state >> 27;
    return (double)((state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

int main(void) {
    const double anchors[8][3] = { { 0, 0, 2.6 }, { 20, 0, 2.6 }, { 40, 0, 2.6 }, { 40, 12, 2.6 },
                                   { 40, 25, 2.6 }, { 20, 25, 2.6 }, { 0, 25, 2.6 }, { 0, 12, 2.55 } };
    const locus_imm_params params = { 1e-5, 0.0004, 0.001, 1.0, 0.1, 0.1, 0.1 };
    double x0[4] = { 10, 10, 0, 0 }, p0[16] = { 0 };
    p0[0] = p0[5] = 0.04; p0[10] = p0[15] = 2.25;
    locus_imm imm;
    locus_imm_reset(&imm, x0, p0, 0);
    double px = 10, py = 10, vx = 0.8, vy = 0.3, t = 0;
    for (int round = 0; round < 400; round++) {
        for (int k = 0; k < 8; k++) {
            t += 0.25 / 8 * (0.5 + unit());
            px += vx * 0.03; py += vy * 0.03;
            if (px < 1 || px > 39) vx = -vx;
            if (py < 1 || py > 24) vy = -vy;
            const double dx = px - anchors[k][0], dy = py - anchors[k][1], dz = 1.1 - anchors[k][2];
            double r = sqrt(dx * dx + dy * dy + dz * dz) + 0.1 * (unit() + unit() + unit() - 1.5);
            if (unit() < 0.05) r += 0.3 + 2 * unit();
            double stats[7] = { 0 };
            const int a = locus_imm_predict(&imm, &params, t);
            const int b = locus_imm_update_range(&imm, anchors[k], 1.1, r, 0.01, 2.5, 4.0, stats);
            printf("%d %d %a %a %a %a\n", a, b, stats[0], stats[1], stats[3], stats[4]);
        }
        if (round % 10 == 0) {
            const double z[2] = { px + 0.05 * (unit() - 0.5), py + 0.05 * (unit() - 0.5) }, r[3] = { 0.01, 0.001, 0.012 };
            double stats[6] = { 0 };
            const int c = locus_imm_update_position(&imm, z, r, 13.82, stats);
            printf("position %d %a %a\n", c, stats[0], stats[2]);
        }
        if (round % 3 == 0) {
            /* An uplink blink: 7 differences against locator 0, one with an NLOS arrival (issue #40). */
            double rows[7 * LOCUS_DIFFERENCE_ROW] = { 0 }, stats[8] = { 0 };
            const double ra = sqrt((px - anchors[0][0]) * (px - anchors[0][0]) + (py - anchors[0][1]) * (py - anchors[0][1])
                                   + (1.1 - anchors[0][2]) * (1.1 - anchors[0][2])) + 0.1 * (unit() - 0.5);
            for (int k = 1; k < 8; k++) {
                double *row = rows + (k - 1) * LOCUS_DIFFERENCE_ROW;
                row[0] = anchors[k][0]; row[1] = anchors[k][1]; row[2] = anchors[k][2];
                const double dx = px - anchors[k][0], dy = py - anchors[k][1], dz = 1.1 - anchors[k][2];
                row[3] = sqrt(dx * dx + dy * dy + dz * dz) + 0.1 * (unit() - 0.5) - ra + (k == 3 ? 2.0 * unit() : 0);
            }
            int predicted = 0;
            const int d = locus_imm_predict_update_differences(&imm, &params, t + 0.001, anchors[0], 7, rows, 1.1, 0.01, 2.5,
                                                               4.0, stats, &predicted);
            t += 0.001;
            printf("differences %d %d %a %a %a %a %a %a\n", d, predicted, stats[0], stats[1], stats[3], stats[4], rows[4], rows[5]);
        }
        double x[4], P[16], mu[3];
        locus_imm_combined(&imm, x, P);
        locus_imm_probabilities(&imm, mu);
        printf("%a %a %a %a %a %a %a %a\n", x[0], x[1], x[2], x[3], P[0], P[5], mu[0], mu[2]);
    }
    return 0;
}
