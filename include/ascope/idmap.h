/* Dense local numbers for the string ids met in one column. A scratch array indexed by string
 * id is sized by the whole string table, and the table a process shares holds every rank's
 * strings: a summary of one rank's 2000 rows then cleared and scanned 800k entries, and 256
 * ranks with call stacks of their own cost the square of the ranks. The map numbers the ids a
 * call meets 1, 2, ... in order of first meeting, in room sized by the rows (which bound how
 * many distinct ids there are), so a call costs its rows whatever the table holds. */
#ifndef ASCOPE_IDMAP_H
#define ASCOPE_IDMAP_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t *slots; /* hash slots: id << 32 would not fit, so two arrays: the id and its number */
  uint32_t *numbers;
  uint32_t *ids; /* number - 1 -> id */
  size_t mask;
  unsigned shift; /* 64 - log2 of the slots */
  uint32_t n;
} asc_idmap;

/* Whether a scratch array of `nids` entries (the string table's ids and 0) is worth replacing
 * by a map for a call over `rows` rows: when the table is much larger than the rows. */
static inline int asc_idmap_wanted(size_t nids, size_t rows) { return nids / 4 > rows + 1024; }

/* The bytes a map for at most `most` distinct ids takes (SIZE_MAX on overflow), for the caller
 * to allocate (a Lua userdata, say, freed even when the call raises an error). */
size_t asc_idmap_bytes(size_t most);
/* Lay a map for at most `most` distinct ids out in mem (asc_idmap_bytes(most) of it). */
void asc_idmap_init(asc_idmap *m, void *mem, size_t most);
/* The number of id, given on first meeting (1, 2, ...); 0 for id 0 (no string). At most `most`
 * distinct ids may be met. */
uint32_t asc_idmap_number(asc_idmap *m, uint32_t id);
#endif
