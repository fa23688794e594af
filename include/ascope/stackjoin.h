/* Call stacks put together from their frames, as a profiler database holds them: one row a
 * frame, the rows of a stack next to each other (same chain key), innermost frame first. Each
 * stack is joined with ";\r\n" (as trace_view.json writes a stack) and interned, so that no
 * text but the table's is ever made of it. */
#ifndef ASCOPE_STACKJOIN_H
#define ASCOPE_STACKJOIN_H
#include "ascope/column.h"
#include "ascope/strtab.h"

#include <stddef.h>

typedef struct {
  size_t bytes;   /* of the stacks' text, a separator counted with every frame */
  size_t missing; /* frames without a value (joined as "") */
} asc_stackjoin_info;

/* chains, depths (NULL: the rows are known to be in order): integer columns; frames: string
 * column of `from`'s ids; as many rows. One string a run of equal non-null chain keys pushed
 * to `out` (a string column of `to`'s ids), its key to `keys` (an integer column); a row whose
 * chain key is null belongs to no stack. 0; 1 when the stacks' bytes would pass max_bytes;
 * 2 when the rows are not in (chain, depth) order, each chain's rows together and its depths
 * rising (the caller sorts them and asks again); -1 when memory is short. Both 1 and 2 are
 * found before any stack is made: nothing is then interned. `from` and `to` may
 * be the same table: its text does not move while it grows. */
int asc_stack_join(const asc_col *chains, const asc_col *depths, const asc_col *frames,
                   const asc_strtab *from, asc_strtab *to, size_t max_bytes, asc_col *out, asc_col *keys,
                   asc_stackjoin_info *info);
#endif
