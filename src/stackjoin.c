/* Call stacks from their frames' rows (see ascope/stackjoin.h). */
#include "ascope/stackjoin.h"
#include "ascope/checked.h"

#include <stdlib.h>
#include <string.h>

#define SEP ";\r\n"
#define SEP_LEN 3

typedef struct {
  char *p;
  size_t n, cap;
} buf;

static int put(buf *b, const char *s, size_t n) {
  size_t need;
  if (asc_size_add(b->n, n, &need)) return -1;
  if (need > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need)
      if (asc_size_mul(cap, 2, &cap)) return -1;
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->n, s, n);
  b->n = need;
  return 0;
}

/* the stack in b interned and pushed with its key; b emptied */
static int flush(buf *b, asc_strtab *to, asc_col *out, asc_col *keys, int64_t key) {
  uint32_t id;
  if (asc_strtab_intern(to, b->p ? b->p : "", b->n, &id) || asc_col_push_str(out, id) ||
      asc_col_push_i64(keys, key))
    return -1;
  b->n = 0;
  return 0;
}

/* is a row of chain k at depth d out of order after the last row (chain key, depth last)? */
static int out_of_order(int first, int64_t key, int64_t last, int64_t k, int64_t d) {
  if (d == ASC_NULL_I64) return 1; /* a sort puts it first: where is not known here */
  return !first && (k < key || (k == key && d <= last));
}

/* the first pass: the order and the bytes, before anything is interned (the table keeps what
 * it holds for good, so stacks over the budget must never reach it) */
static int measure(const asc_col *chains, const asc_col *depths, const asc_col *frames,
                   const asc_strtab *from, size_t max_bytes, asc_stackjoin_info *info) {
  int first = 1;
  int64_t key = 0, last = 0;
  for (size_t i = 0; i < chains->n && i < frames->n; i++) {
    int64_t k = asc_col_int(chains, i);
    if (k == ASC_NULL_I64) continue;
    if (depths) {
      int64_t d = i < depths->n ? asc_col_int(depths, i) : ASC_NULL_I64;
      if (out_of_order(first, key, last, k, d)) return 2;
      last = d;
    }
    first = 0;
    key = k;
    size_t len = 0;
    if (!frames->v.s[i] || !asc_strtab_length(from, frames->v.s[i], &len)) info->missing++;
    if (info->bytes > max_bytes || len + SEP_LEN > max_bytes - info->bytes) return 1;
    info->bytes += len + SEP_LEN;
  }
  return 0;
}

int asc_stack_join(const asc_col *chains, const asc_col *depths, const asc_col *frames,
                   const asc_strtab *from, asc_strtab *to, size_t max_bytes, asc_col *out, asc_col *keys,
                   asc_stackjoin_info *info) {
  info->bytes = info->missing = 0;
  int rc = measure(chains, depths, frames, from, max_bytes, info);
  if (rc) return rc;
  buf b = {NULL, 0, 0};
  int open = 0; /* b holds a stack not yet pushed */
  int64_t key = 0;
  for (size_t i = 0; i < chains->n && i < frames->n && !rc; i++) {
    int64_t k = asc_col_int(chains, i);
    if (k == ASC_NULL_I64) continue;
    if (open && k != key && flush(&b, to, out, keys, key)) rc = -1;
    size_t len = 0;
    const char *s = frames->v.s[i] ? asc_strtab_get(from, frames->v.s[i], &len) : NULL;
    if (!rc && ((open && k == key && put(&b, SEP, SEP_LEN)) || put(&b, s ? s : "", len))) rc = -1;
    open = 1;
    key = k;
  }
  if (!rc && open && flush(&b, to, out, keys, key)) rc = -1;
  free(b.p);
  return rc;
}
