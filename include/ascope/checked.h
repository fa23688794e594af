/* Checked sizes and saturating int64 arithmetic. Every size that comes from a file or from
 * Lua goes through these before it reaches an allocator, a pointer or a loop bound. */
#ifndef ASCOPE_CHECKED_H
#define ASCOPE_CHECKED_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* a * b into *out; non-zero when it does not fit in a size_t. */
static inline int asc_size_mul(size_t a, size_t b, size_t *out) { return __builtin_mul_overflow(a, b, out); }
static inline int asc_size_add(size_t a, size_t b, size_t *out) { return __builtin_add_overflow(a, b, out); }

/* realloc for n items of size bytes; NULL (p untouched) when n * size overflows or memory is
 * short. n = 0 still gives a real block, so callers never hand NULL to memcpy. */
static inline void *asc_realloc_array(void *p, size_t n, size_t size) {
  size_t bytes;
  if (asc_size_mul(n ? n : 1, size, &bytes)) return NULL;
  return realloc(p, bytes);
}

static inline void *asc_alloc_array(size_t n, size_t size) { return asc_realloc_array(NULL, n, size); }

/* int64 sums and differences that stop at the ends of the range instead of wrapping (times
 * near +-9.2e18 ns from a corrupt file must not turn into undefined behaviour). */
static inline int64_t asc_sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN + 1; /* INT64_MIN is the missing-value marker */
}

static inline int64_t asc_sat_sub(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? INT64_MAX : INT64_MIN + 1;
}

/* A double as an int64: NaN, infinities and values outside the range become INT64_MIN, the
 * missing-value marker (a plain cast is undefined there). */
static inline int64_t asc_f64_to_i64(double d) {
  if (!(d > -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
  return (int64_t)d;
}

#endif
