/* The id map numbers ids 1, 2, ... in order of first meeting, gives 0 for id 0, and keeps its
 * numbers when ids are met again, whatever their spacing (ids a power of two apart included). */
#include <stdlib.h>

#include "ascope/idmap.h"
#include "ctest.h"

static int numbers_in_order(size_t most, uint32_t stride, unsigned seed) {
  void *mem = malloc(asc_idmap_bytes(most));
  uint32_t *seen = calloc(most + 1, sizeof *seen);
  if (!mem || !seen) return 0;
  asc_idmap m;
  asc_idmap_init(&m, mem, most);
  srand(seed);
  int ok = asc_idmap_number(&m, 0) == 0;
  for (size_t round = 0; ok && round < 4 * most; round++) {
    size_t k = (size_t)rand() % most; /* the k-th id, met again and again */
    uint32_t id = (uint32_t)(k + 1) * stride, want = seen[k] ? seen[k] : m.n + 1;
    uint32_t got = asc_idmap_number(&m, id);
    ok = got == want && m.ids[got - 1] == id;
    seen[k] = got;
  }
  free(mem);
  free(seen);
  return ok && m.n <= most;
}

int main(void) {
  CHECK(asc_idmap_bytes(0) > 0 && asc_idmap_bytes(SIZE_MAX / 2) == SIZE_MAX);
  CHECK(numbers_in_order(1, 1, 1));
  CHECK(numbers_in_order(1000, 1, 2));
  CHECK(numbers_in_order(1000, 1024, 3));  /* a power of two apart */
  CHECK(numbers_in_order(5000, 65536, 4)); /* ids up to 2^28 */
  CHECK(numbers_in_order(3, 0x40000000u, 5));
  CTEST_END();
}
