// CLocusKernels: fixed-size, allocation-free C kernels for the per-fix hot path.
// One header per concern lives next to this one (locus_trilateration.h, …).
#pragma once
