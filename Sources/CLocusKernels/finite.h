// Private to the kernels (not under include/): helpers shared by the .c files.
#ifndef LOCUS_KERNELS_FINITE_H
#define LOCUS_KERNELS_FINITE_H
#include <float.h>

/// x finite, as two floating-point compares (NaN fails both). Without -ffinite-math-only, isfinite()
/// compiles to an integer classification of the bits (a move to a general register, a 64-bit mask
/// constant, shifts and compares: ~10 operations); these are on per-range and per-iteration paths.
#define finite(x) ((x) >= -DBL_MAX && (x) <= DBL_MAX)

#endif
