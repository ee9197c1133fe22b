// LAPACKE and CBLAS, as Debian's liblapacke-dev and libopenblas-dev install them.
// libblas resolves to OpenBLAS through Debian's alternatives; without it cblas_* is undefined.
#ifndef LOCUS_CLAPACKE_SHIM_H
#define LOCUS_CLAPACKE_SHIM_H
#include <lapacke.h>
#include <cblas.h>
#endif
