/* The hash of interned text (strings, call-stack frames): eight bytes a step, since call stacks
 * are kilobytes long and every distinct one is hashed. */
#ifndef ASCOPE_HASH_H
#define ASCOPE_HASH_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 64 bits of s[0, n) mixed into seed */
static inline uint64_t asc_hash_bytes(uint64_t seed, const char *s, size_t n) {
  uint64_t h = seed;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  if (n > i) memcpy(&w, s + i, n - i);
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
  h ^= h >> 29;
  return h;
}
#endif
