/* Open-addressing hash of strings stored in an append-only arena. Ids are dense, starting at 1,
 * so columns can hold 4-byte ids instead of pointers. */
#include "ascope/strtab.h"
#include "ascope/checked.h"
#include "ascope/hash.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  size_t off;
  uint32_t len;
  uint32_t hash;
} entry;

struct asc_strtab {
  char *arena;
  size_t arena_n, arena_cap;
  entry *ents; /* index by id; ents[0] unused */
  uint32_t nents, ents_cap;
  uint32_t *slots; /* 0 = empty, else id */
  size_t nslots;   /* power of two */
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
  t->arena_cap = 1 << 16;
  t->arena = malloc(t->arena_cap);
  if (!t->slots || !t->ents || !t->arena) {
    asc_strtab_free(t);
    return NULL;
  }
  t->nents = 1;
  return t;
}

void asc_strtab_free(asc_strtab *t) {
  if (!t) return;
  free(t->arena);
  free(t->ents);
  free(t->slots);
  free(t);
}

static int grow_slots(asc_strtab *t) {
  size_t nn = t->nslots * 2;
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

int asc_strtab_intern(asc_strtab *t, const char *s, size_t n, uint32_t *id) {
  if (n > UINT32_MAX) return -1;
  uint32_t h = hash_bytes(s, n);
  size_t mask = t->nslots - 1, i = h & mask;
  for (uint32_t cur; (cur = t->slots[i]) != 0; i = (i + 1) & mask) {
    const entry *e = &t->ents[cur];
    if (e->hash == h && e->len == n && memcmp(t->arena + e->off, s, n) == 0) {
      *id = cur;
      return 0;
    }
  }
  if (t->nents == UINT32_MAX) return -1;
  if (t->arena_n + n + 1 > t->arena_cap) {
    size_t nc = t->arena_cap;
    while (t->arena_n + n + 1 > nc) nc *= 2;
    char *na = realloc(t->arena, nc);
    if (!na) return -1;
    t->arena = na;
    t->arena_cap = nc;
  }
  if (t->nents == t->ents_cap) {
    uint32_t nc = t->ents_cap * 2;
    entry *ne = asc_realloc_array(t->ents, (size_t)nc, sizeof *ne);
    if (!ne) return -1;
    t->ents = ne;
    t->ents_cap = nc;
  }
  if (n) memcpy(t->arena + t->arena_n, s, n);
  t->arena[t->arena_n + n] = '\0';
  uint32_t nid = t->nents++;
  t->ents[nid] = (entry){t->arena_n, (uint32_t)n, h};
  t->arena_n += n + 1;
  t->slots[i] = nid;
  *id = nid;
  if ((size_t)t->nents * 2 > t->nslots && grow_slots(t) != 0) return -1;
  return 0;
}

const char *asc_strtab_get(const asc_strtab *t, uint32_t id, size_t *n) {
  if (id == 0 || id >= t->nents) return NULL;
  if (n) *n = t->ents[id].len;
  return t->arena + t->ents[id].off;
}

uint32_t asc_strtab_count(const asc_strtab *t) { return t->nents - 1; }

size_t asc_strtab_bytes(const asc_strtab *t) {
  return t->arena_cap + (size_t)t->ents_cap * sizeof(entry) + t->nslots * sizeof(uint32_t);
}
