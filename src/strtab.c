/* Open-addressing hash of strings stored in an arena of chunks. Ids are dense, starting at 1,
 * so columns can hold 4-byte ids instead of pointers.
 *
 * The arena is a list of chunks that never move: a string's text stays where it was put for
 * the table's life (no copy on growth, so no moment holding the old arena and the new one, and
 * a pointer from asc_strtab_get survives later interning). Chunks grow from 64 KiB to 2 MiB;
 * a string longer than that gets a chunk of its own size. Strings are laid out in id order,
 * chunk after chunk, which is what lets asc_strtab_drain free a table's text as it goes.
 *
 * The 2 MiB chunks are aligned and marked for transparent huge pages: a million distinct call
 * stacks put hundreds of MB of new text here, and where the kernel gives huge pages on request
 * only (transparent_hugepage "madvise") every 4 KiB of it would otherwise cost a page fault of
 * its own. Only once a table holds 16 MiB: a partly filled huge page is resident whole. */
#include "ascope/strtab.h"
#include "ascope/checked.h"
#include "ascope/hash.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK_FIRST ((size_t)1 << 16)
#define CHUNK_MOST ((size_t)1 << 21)  /* a huge page on x86-64 and on aarch64 with 4 KiB pages */
#define HUGE_AFTER ((size_t)16 << 20) /* a partly filled huge page is then at most an eighth more */

typedef struct {
  uint32_t chunk, off, len, hash;
} entry;

struct asc_strtab {
  char **chunks;
  uint32_t nchunks, chunks_cap;
  size_t fill, room;  /* of the last chunk */
  size_t chunk_bytes; /* every chunk's size, for asc_strtab_bytes */
  entry *ents;        /* index by id; ents[0] unused */
  uint32_t nents, ents_cap;
  uint32_t *slots; /* 0 = empty, else id */
  size_t nslots;   /* power of two; 0 once drained */
};

static uint32_t hash_bytes(const char *s, size_t n) {
  uint64_t h = asc_hash_bytes(0x9E3779B97F4A7C15ull ^ n, s, n);
  uint32_t r = (uint32_t)(h ^ (h >> 32));
  return r ? r : 1;
}

asc_strtab *asc_strtab_new(void) {
  asc_strtab *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->nslots = 1024;
  t->slots = calloc(t->nslots, sizeof *t->slots);
  t->ents_cap = 512;
  t->ents = asc_alloc_array(t->ents_cap, sizeof *t->ents);
  if (!t->slots || !t->ents) {
    asc_strtab_free(t);
    return NULL;
  }
  t->nents = 1;
  return t;
}

void asc_strtab_free(asc_strtab *t) {
  if (!t) return;
  for (uint32_t c = 0; c < t->nchunks; c++) free(t->chunks[c]);
  free(t->chunks);
  free(t->ents);
  free(t->slots);
  free(t);
}

static int grow_slots(asc_strtab *t) {
  size_t nn;
  if (asc_size_mul(t->nslots, 2, &nn)) return -1;
  uint32_t *ns = calloc(nn, sizeof *ns);
  if (!ns) return -1;
  for (uint32_t id = 1; id < t->nents; id++) {
    size_t i = t->ents[id].hash & (nn - 1);
    while (ns[i]) i = (i + 1) & (nn - 1);
    ns[i] = id;
  }
  free(t->slots);
  t->slots = ns;
  t->nslots = nn;
  return 0;
}

/* room for n + 1 bytes at the end of the last chunk, starting a new chunk when it lacks it */
static int make_room(asc_strtab *t, size_t n) {
  if (t->nchunks && t->room - t->fill >= n + 1) return 0;
  if (t->nchunks == UINT32_MAX) return -1;
  if (t->nchunks == t->chunks_cap) {
    uint32_t nc = t->chunks_cap ? t->chunks_cap * 2 : 8;
    char **p = asc_realloc_array(t->chunks, nc, sizeof *p);
    if (!p) return -1;
    t->chunks = p;
    t->chunks_cap = nc;
  }
  size_t size = t->nchunks >= 5 ? CHUNK_MOST : CHUNK_FIRST << t->nchunks;
  if (size < n + 1) size = n + 1;
  char *c = size == CHUNK_MOST ? aligned_alloc(CHUNK_MOST, size) : malloc(size);
  if (!c) return -1;
#ifdef MADV_HUGEPAGE
  if (size == CHUNK_MOST && t->chunk_bytes >= HUGE_AFTER) (void)madvise(c, size, MADV_HUGEPAGE); /* a hint */
#endif
  t->chunks[t->nchunks++] = c;
  t->fill = 0;
  t->room = size;
  t->chunk_bytes += size;
  return 0;
}

int asc_strtab_intern(asc_strtab *t, const char *s, size_t n, uint32_t *id) {
  if (n >= UINT32_MAX || !t->nslots) return -1;
  uint32_t h = hash_bytes(s, n);
  size_t mask = t->nslots - 1, i = h & mask;
  for (uint32_t cur; (cur = t->slots[i]) != 0; i = (i + 1) & mask) {
    const entry *e = &t->ents[cur];
    if (e->hash == h && e->len == n && memcmp(t->chunks[e->chunk] + e->off, s, n) == 0) {
      *id = cur;
      return 0;
    }
  }
  if (t->nents == UINT32_MAX) return -1;
  if (t->nents == t->ents_cap) {
    uint32_t nc = t->ents_cap > UINT32_MAX / 2 ? UINT32_MAX : t->ents_cap * 2;
    entry *ne = asc_realloc_array(t->ents, (size_t)nc, sizeof *ne);
    if (!ne) return -1;
    t->ents = ne;
    t->ents_cap = nc;
  }
  if (make_room(t, n)) return -1;
  char *at = t->chunks[t->nchunks - 1] + t->fill;
  if (n) memcpy(at, s, n);
  at[n] = '\0';
  uint32_t nid = t->nents++;
  t->ents[nid] = (entry){t->nchunks - 1, (uint32_t)t->fill, (uint32_t)n, h};
  t->fill += n + 1;
  t->slots[i] = nid;
  *id = nid;
  if ((size_t)t->nents * 2 > t->nslots && grow_slots(t) != 0) return -1;
  return 0;
}

const char *asc_strtab_get(const asc_strtab *t, uint32_t id, size_t *n) {
  if (id == 0 || id >= t->nents || !t->chunks[t->ents[id].chunk]) return NULL;
  if (n) *n = t->ents[id].len;
  return t->chunks[t->ents[id].chunk] + t->ents[id].off;
}

uint32_t asc_strtab_count(const asc_strtab *t) { return t->nents - 1; }

size_t asc_strtab_bytes(const asc_strtab *t) {
  return t->chunk_bytes + (size_t)t->ents_cap * sizeof(entry) + t->nslots * sizeof(uint32_t) +
         (size_t)t->chunks_cap * sizeof(char *);
}

int asc_strtab_drain(asc_strtab *to, asc_strtab *from, uint32_t *map) {
  free(from->slots); /* no lookups from here on */
  from->slots = NULL;
  from->nslots = 0;
  map[0] = 0;
  uint32_t freed = 0; /* chunks below this one are freed */
  int rc = 0;
  for (uint32_t id = 1; id < from->nents && !rc; id++) {
    const entry *e = &from->ents[id];
    for (; freed < e->chunk; freed++) {
      free(from->chunks[freed]);
      from->chunks[freed] = NULL;
    }
    rc = asc_strtab_intern(to, from->chunks[e->chunk] + e->off, e->len, &map[id]);
  }
  for (; freed < from->nchunks; freed++) {
    free(from->chunks[freed]);
    from->chunks[freed] = NULL;
  }
  from->chunk_bytes = 0;
  return rc;
}

uint32_t *asc_strtab_drain_map(asc_strtab *to, asc_strtab *from) {
  uint32_t *map = asc_alloc_array((size_t)asc_strtab_count(from) + 1, sizeof *map);
  if (map && asc_strtab_drain(to, from, map)) {
    free(map);
    return NULL;
  }
  return map;
}
