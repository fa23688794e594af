/* Point lookups over slices without an index: for each query (key, t), the slice of that key
 * with the latest start <= t whose [start, start + dur] holds t, ties going to the later input
 * row (what asc_match_within answers). One pass over the slices; memory grows with the queries
 * only, so a few thousand points among millions of slices cost no copy of the slices. */
#ifndef ASCOPE_STAB_H
#define ASCOPE_STAB_H

#include <stddef.h>
#include <stdint.h>

#include "ascope/column.h"

/* keys (an integer column, I64 or U32, of at least n rows), starts, durs: n slices (a null start or duration
 * never holds a point). qkeys, qts: m queries (a null time matches nothing). out[j]: 0-based slice row for
 * query j, or -1. Returns 0, or -1 when memory is short (out untouched). */
int asc_stab_within(const asc_col *keys, const int64_t *starts, const int64_t *durs, size_t n,
                    const int64_t *qkeys, const int64_t *qts, size_t m, int64_t *out);

#endif
