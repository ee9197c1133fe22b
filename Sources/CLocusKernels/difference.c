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
        // The pseudo-range form (locus_measurement_difference.h): the centred sums are unchanged
        // when one vector is added to every row of a group, so the rows are the range model's
        // lines of sight uᵢ = (p − bᵢ)/ρᵢ (vᵢ = uᵢ − u_A shifted by u_A) and the reference's own
        // row is u_A (included when A is in the fit); the residuals stay eᵢ = zᵢ − (ρᵢ − ρ_A) and
        // the reference's 0. ρ_A is computed once per group: one square root and one division per
        // arrival instead of two per difference.
        double da[3];
        locus_range_offset(px, py, pz, a, da);
        const double rho_a = locus_range_predicted(da[0], da[1], da[2]);
        int32_t arrivals = 0;
        double sx = 0, sy = 0, sz = 0, se = 0, see = 0;
        double sxx = 0, sxy = 0, sxz = 0, syy = 0, syz = 0, szz = 0, sxe = 0, sye = 0, sze = 0;
        if (excluded[first->reference] == 0) {
            const double ia = locus_range_inverse(rho_a);
            const double gx = da[0] * ia, gy = da[1] * ia, gz = planar ? 0.0 : da[2] * ia;
            arrivals = 1;
            sx = gx; sy = gy; sz = gz;
            sxx = gx * gx; sxy = gx * gy; sxz = gx * gz; syy = gy * gy; syz = gy * gz; szz = gz * gz;
        }
        for (int32_t j = start; j < end; j++) {
            const int32_t l = pairs[j].locator;
            if (excluded[l] != 0) continue;
            double db[3];
            locus_range_offset(px, py, pz, xyz + 3 * (int64_t)l, db);
            const double rho_b = locus_range_predicted(db[0], db[1], db[2]);
            const double ib = locus_range_inverse(rho_b);
            const double gx = db[0] * ib, gy = db[1] * ib, gz = planar ? 0.0 : db[2] * ib;
            const double e = pairs[j].difference_m - (rho_b - rho_a);   // z − h, h = ρ_B − ρ_A
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
