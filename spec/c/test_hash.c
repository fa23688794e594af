/* The interning hash reads every byte: in the four-chain part (64 bytes and more), in its
 * 8-byte steps and in the tail. A change of any one bit anywhere, or of the length alone,
 * gives another hash; equal text the same hash. A frame's hash under its parent cannot be made
 * one for every parent by the frame's text. */
#include <string.h>

#include "ascope/hash.h"
#include "ctest.h"

/* every single-bit change of s[0, n) changes the hash */
static int every_bit_counts(const char *s, size_t n) {
  char b[256];
  memcpy(b, s, n);
  uint64_t h = asc_hash_bytes(7, b, n);
  for (size_t i = 0; i < n; i++)
    for (int bit = 0; bit < 8; bit++) {
      b[i] ^= (char)(1 << bit);
      int changed = asc_hash_bytes(7, b, n) != h;
      b[i] ^= (char)(1 << bit);
      if (!changed) return 0;
    }
  return asc_hash_bytes(7, b, n) == h;
}

int main(void) {
  char text[256];
  for (size_t i = 0; i < sizeof text; i++) text[i] = (char)('a' + i % 26);
  CHECK(every_bit_counts(text, 5));   /* tail only */
  CHECK(every_bit_counts(text, 63));  /* 8-byte steps and a tail */
  CHECK(every_bit_counts(text, 64));  /* two 32-byte blocks of the four chains */
  CHECK(every_bit_counts(text, 100)); /* blocks, steps and a tail */
  CHECK(every_bit_counts(text, 256));
  /* the same bytes, another length (the tail is zero-padded; the length is in the seed) */
  char z[72] = {0};
  CHECK(asc_hash_bytes(64, z, 64) != asc_hash_bytes(72, z, 72));
  CHECK(asc_hash_bytes(1, text, 100) != asc_hash_bytes(2, text, 100)); /* the seed counts */
  /* the four chains are not interchangeable: swapping two 8-byte words of a block changes it */
  char sw[64];
  memcpy(sw, text, 64);
  memcpy(sw, text + 8, 8);
  memcpy(sw + 8, text, 8);
  CHECK(asc_hash_bytes(0, sw, 64) != asc_hash_bytes(0, text, 64));
  /* a frame's hash under its parent: text whose bytes 4-7 are the parent's id (xor a constant)
   * for each parent, which cancelled the id when it was in the seed, gives as many hashes as
   * parents, but for the chance collisions of 32 bits */
  enum { PARENTS = 20000 };
  static uint32_t h[PARENTS];
  for (uint32_t p = 0; p < PARENTS; p++) {
    char f[8] = {'T', 'T', 'T', 'T'};
    uint32_t x = (p + 1) ^ 0x41414141u;
    memcpy(f + 4, &x, 4);
    h[p] = asc_hash_under(p + 1, f, sizeof f);
  }
  size_t same = 0;
  for (uint32_t p = 0; p < PARENTS; p++)
    for (uint32_t q = p + 1; q < PARENTS; q++) same += h[p] == h[q];
  CHECK(same <= 2);
  CHECK(asc_hash_under(1, "f", 1) != asc_hash_under(2, "f", 1)); /* the parent counts */
  CHECK(asc_hash_seed() == asc_hash_seed() && asc_hash_seed() != 0);
  CTEST_END();
}
