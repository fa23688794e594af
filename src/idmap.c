/* Dense local numbers for string ids (see ascope/idmap.h): open addressing with linear probes
 * in at least twice the room the ids need, so a probe run stays short and the map never grows. */
#include "ascope/idmap.h"
#include "ascope/checked.h"

#include <string.h>

static size_t slots_for(size_t most) {
  size_t cap = 16;
  while (cap < most * 2 && cap < ((size_t)1 << 62)) cap <<= 1;
  return cap;
}

size_t asc_idmap_bytes(size_t most) {
  size_t cap = slots_for(most), a, b, total;
  if (asc_size_mul(cap, 2 * sizeof(uint32_t), &a) || asc_size_mul(most + 1, sizeof(uint32_t), &b) ||
      asc_size_add(a, b, &total))
    return SIZE_MAX;
  return total;
}

void asc_idmap_init(asc_idmap *m, void *mem, size_t most) {
  size_t cap = slots_for(most);
  m->slots = mem;
  m->numbers = m->slots + cap;
  m->ids = m->numbers + cap;
  m->mask = cap - 1;
  m->shift = 64;
  for (size_t c = cap; c > 1; c >>= 1) m->shift--;
  m->n = 0;
  memset(m->slots, 0, cap * sizeof *m->slots); /* id 0 is never stored: 0 marks an empty slot */
}

uint32_t asc_idmap_number(asc_idmap *m, uint32_t id) {
  if (!id) return 0;
  /* the product's high bits: they depend on every bit of the id, so ids a power of two apart
   * do not all fall on one slot */
  size_t i = (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> m->shift);
  for (; m->slots[i]; i = (i + 1) & m->mask)
    if (m->slots[i] == id) return m->numbers[i];
  m->slots[i] = id;
  m->numbers[i] = ++m->n;
  m->ids[m->n - 1] = id;
  return m->n;
}
