/* The hash of interned text (strings, call-stack frames). Call stacks are kilobytes long and
 * every one met is hashed (a repeated stack too, to find its id), so the hash runs four
 * independent multiply chains over 32-byte blocks: the chains overlap in the CPU instead of
 * each 8-byte step waiting for the previous multiply. Shorter text, and the tail, take eight
 * bytes a step. */
#ifndef ASCOPE_HASH_H
#define ASCOPE_HASH_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ASC_HASH_M1 0xFF51AFD7ED558CCDULL
#define ASC_HASH_M2 0xC4CEB9FE1A85EC53ULL

static inline uint64_t asc_hash_step(uint64_t h, uint64_t w) {
  h = (h ^ w) * ASC_HASH_M1;
  return h ^ (h >> 32);
}

/* 64 bits of s[0, n) mixed into seed */
static inline uint64_t asc_hash_bytes(uint64_t seed, const char *s, size_t n) {
  uint64_t h = seed;
  size_t i = 0;
  if (n >= 64) { /* four named chains: an array of lanes is vectorised into slow 64-bit SSE2 multiplies */
    uint64_t a = seed, b = seed ^ ASC_HASH_M2, c = seed + ASC_HASH_M1, d = ~seed;
    for (; i + 32 <= n; i += 32) {
      uint64_t w[4];
      memcpy(w, s + i, sizeof w);
      a = asc_hash_step(a, w[0]);
      b = asc_hash_step(b, w[1]);
      c = asc_hash_step(c, w[2]);
      d = asc_hash_step(d, w[3]);
    }
    h = asc_hash_step(asc_hash_step(asc_hash_step(asc_hash_step(h, a), b), c), d);
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = asc_hash_step(h, w);
  }
  uint64_t w = 0;
  if (n > i) memcpy(&w, s + i, n - i);
  h = (h ^ w) * ASC_HASH_M2;
  h ^= h >> 29;
  return h;
}

/* A number drawn once a process (getrandom, else the clock and addresses) that every hash
 * table's hash starts from: which strings or keys share a run of slots is not known before
 * the run, so no file can be made to put all of its own in one (each lookup would then walk
 * them all). Ids, orders and outputs never depend on it; forked workers share it. */
uint64_t asc_hash_seed(void);

/* The hash of an integer key (rows, times, task ids, string ids): one multiply chain from the
 * seed, which spreads keys that are multiples of a step over every slot. */
static inline uint64_t asc_hash_key(uint64_t key) { return asc_hash_step(asc_hash_seed(), key); }

/* 32 bits of the text s[0, n) under a parent id (a frame of the call-stack tree). The id is
 * mixed in after the text: in the seed, the text's first word would cancel it, and a file could
 * give every frame one hash by choosing those bytes for each parent. */
static inline uint32_t asc_hash_under(uint32_t parent, const char *s, size_t n) {
  uint64_t h = asc_hash_step(asc_hash_bytes(asc_hash_seed() ^ n, s, n), parent);
  return (uint32_t)(h ^ (h >> 32));
}
#endif
