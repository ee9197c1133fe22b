// The TDoA solver's normal equations (see include/locus_difference.h). The grouping rule is
// LocusSolvers' DifferencePair.sharesArrival: the same reference and the same time.
#include "locus_difference.h"

#include "locus_measurement_difference.h"

static inline __attribute__((always_inline)) int shares_arrival(const locus_difference_pair *a,
                                                                const locus_difference_pair *b) {
    return a->reference == b->reference && a->time_s == b->time_s;
}

void locus_difference_linearize(const double *xyz, const locus_difference_pair *pairs, int32_t count,
                                const int32_t *excluded, int32_t planar, double px, double py, double pz,
                                locus_difference_normal *out) {
    double nxx = 0, nxy = 0, nxz = 0, nyy = 0, nyz = 0, nzz = 0, bx = 0, by = 0, bz = 0, c = 0;
    int32_t start = 0;
    while (start < count) {
        const locus_difference_pair *first = &pairs[start];
        int32_t end = start + 1;
        while (end < count && shares_arrival(&pairs[end], first)) end++;
        const double *a = xyz + 3 * (int64_t)first->reference;
        int32_t arrivals = excluded[first->reference] == 0 ? 1 : 0;
        double sx = 0, sy = 0, sz = 0, se = 0, see = 0;
        double sxx = 0, sxy = 0, sxz = 0, syy = 0, syz = 0, szz = 0, sxe = 0, sye = 0, sze = 0;
        for (int32_t j = start; j < end; j++) {
            const int32_t l = pairs[j].locator;
            if (excluded[l] != 0) continue;
            double g[3];
            const double h = locus_difference_jacobian(px, py, pz, a, xyz + 3 * (int64_t)l, g);
            const double gx = g[0], gy = g[1], gz = planar ? 0.0 : g[2], e = pairs[j].difference_m - h;
            arrivals++;
            sx += gx; sy += gy; sz += gz; se += e; see += e * e;
            sxx += gx * gx; sxy += gx * gy; sxz += gx * gz; syy += gy * gy; syz += gy * gz; szz += gz * gz;
            sxe += gx * e; sye += gy * e; sze += gz * e;
        }
        if (arrivals >= 2) {
            const int32_t m = arrivals - 1;
            const double w = locus_difference_whitening(m);
            const double kappa = w * (2.0 + (double)m * w);   // (I + 11ᵀ)⁻¹ = WᵀW = I + κ 11ᵀ
            nxx += sxx + kappa * sx * sx; nxy += sxy + kappa * sx * sy; nxz += sxz + kappa * sx * sz;
            nyy += syy + kappa * sy * sy; nyz += syz + kappa * sy * sz; nzz += szz + kappa * sz * sz;
            bx += sxe + kappa * sx * se; by += sye + kappa * sy * se; bz += sze + kappa * sz * se;
            const double cg = see + kappa * se * se;
            c += (cg > 0.0 || cg != cg) ? cg : 0.0;   // rounding can leave −0; NaN stays NaN
        }
        start = end;
    }
    out->n[0] = nxx; out->n[1] = nxy; out->n[2] = nxz; out->n[3] = nyy; out->n[4] = nyz; out->n[5] = nzz;
    out->b[0] = bx; out->b[1] = by; out->b[2] = bz; out->c = c;
}
