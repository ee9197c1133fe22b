// CLocusKernels: fixed-size, allocation-free C kernels for the per-fix hot path.
// One header per concern; this one gathers them.
#pragma once
#include "locus_trilateration.h"
#include "locus_kalman.h"
#include "locus_kalman3.h"
#include "locus_imm.h"
#include "locus_difference.h"
#include "locus_measurement.h"
#include "locus_measurement_range.h"
#include "locus_measurement_difference.h"
#include "locus_prefetch.h"
#include "locus_memory.h"
