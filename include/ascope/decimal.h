/* Exact number parsing from text. Ascend writes timestamps as decimal microseconds with
 * sixteen significant digits ("1736408883688177.930"), more than a double holds, so times are
 * converted digit by digit to int64 nanoseconds. */
#ifndef ASCOPE_DECIMAL_H
#define ASCOPE_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* Decimal text scaled by 10^scale into an int64, rounding half away from zero past the kept
 * digits. Accepts sign, fraction and exponent. scale 3 turns microseconds into nanoseconds.
 * 0 on success, -1 on text that is not a number or overflows. */
int asc_decimal_scaled(const char *s, size_t n, int scale, int64_t *out);
/* Whole number (a fraction part of zeros is accepted). */
int asc_decimal_i64(const char *s, size_t n, int64_t *out);
/* Double from bounded text. */
int asc_decimal_f64(const char *s, size_t n, double *out);
/* Trim spaces, tabs, CR and LF at both ends; returns the new length and moves *s. */
size_t asc_trim(const char **s, size_t n);
/* True for the texts that mean "no value" in Ascend CSVs: empty, N/A, NA, NaN, null, None. */
int asc_is_na(const char *s, size_t n);

/* Shortest text (%.15g..%.17g) that reads back as the same double; "" for NaN/inf.
 * buf must hold 32 bytes. Returns the length. */
size_t asc_format_double(double x, char *buf);

/* Formatted doubles by value: a writer meets the same values again and again (reserved memory
 * changes rarely, active equals allocated, sizes repeat), and formatting costs far more than a
 * lookup. Direct-mapped, small enough to stay in the first-level cache. */
#define ASC_DCACHE_BITS 6
typedef struct {
  uint64_t bits[1 << ASC_DCACHE_BITS];
  unsigned char len[1 << ASC_DCACHE_BITS]; /* 0: empty */
  unsigned char point[1 << ASC_DCACHE_BITS];
  char text[1 << ASC_DCACHE_BITS][40];
} asc_dcache;
void asc_dcache_init(asc_dcache *c);
/* The text of asc_format_double(x) (with ".0" appended to a whole number when point is set),
 * kept in c; *len 0 for NaN/inf. The text stays valid until the next call. */
const char *asc_format_double_cached(asc_dcache *c, double x, int point, size_t *len);

/* Exact decimal text of v / 10^digits with trailing zeros dropped and at least one decimal:
 * (1000100000, 6) -> "1000.1", (6000000000, 6) -> "6000.0". buf must hold 32 bytes. */
size_t asc_format_scaled(int64_t v, int digits, char *buf);
/* Decimal text of an integer; buf must hold 24 bytes. */
size_t asc_format_int(int64_t v, char *buf);

#endif
