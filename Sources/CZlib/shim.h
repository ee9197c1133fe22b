// zlib, as Debian's zlib1g-dev installs it: gzip-compressed traces are read through inflate().
#ifndef LOCUS_CZLIB_SHIM_H
#define LOCUS_CZLIB_SHIM_H
#include <zlib.h>
#endif
