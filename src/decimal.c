/* Digit-by-digit decimal conversion, so sixteen-digit microsecond stamps keep every digit. */
#include "ascope/decimal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

size_t asc_trim(const char **s, size_t n) {
  const char *p = *s;
  while (n && is_space(p[0])) p++, n--;
  while (n && is_space(p[n - 1])) n--;
  *s = p;
  return n;
}

int asc_is_na(const char *s, size_t n) {
  n = asc_trim(&s, n);
  if (n == 0) return 1;
  if ((s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '.' || (s[0] == '-' && n > 1))
    return 0; /* the common case: a number */
  static const char *na[] = {"N/A", "NA", "NaN", "null", "None", "nan", "-"};
  for (size_t i = 0; i < sizeof na / sizeof *na; i++)
    if (strlen(na[i]) == n && strncasecmp(na[i], s, n) == 0) return 1;
  return 0;
}

/* The common case: [-]digits[.digits], at most 19 digits in all and at most `scale` decimals,
 * so the value is the digits times a power of ten, with nothing to round. -1 for anything else
 * (a plus sign, an exponent, more decimals or digits, a result past int64), which the general
 * path decides; where this path gives a value, the general path gives the same. */
static int fast_scaled(const char *s, size_t n, int scale, int64_t *out) {
  size_t i = n && s[0] == '-';
  size_t first = i;
  uint64_t m = 0;
  for (; i < n && (unsigned char)(s[i] - '0') <= 9; i++) m = m * 10 + (unsigned)(s[i] - '0');
  size_t digits = i - first, frac = 0;
  if (i < n && s[i] == '.')
    for (i++; i < n && (unsigned char)(s[i] - '0') <= 9; i++, frac++) m = m * 10 + (unsigned)(s[i] - '0');
  if (i != n || digits + frac == 0 || digits + frac > 19 || scale < 0 || frac > (size_t)scale ||
      (size_t)scale - frac > 18)
    return -1;
  uint64_t mul = 1;
  for (size_t k = frac; k < (size_t)scale; k++) mul *= 10;
  if (m > (uint64_t)INT64_MAX / mul) return -1;
  m *= mul;
  *out = first ? -(int64_t)m : (int64_t)m;
  return 0;
}

int asc_decimal_scaled(const char *s, size_t n, int scale, int64_t *out) {
  n = asc_trim(&s, n);
  if (n >= 2 && s[0] == '"' && s[n - 1] == '"') s++, n -= 2, n = asc_trim(&s, n);
  if (fast_scaled(s, n, scale, out) == 0) return 0;
  size_t i = 0;
  int neg = 0;
  if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  /* Keep up to 19 significant digits (an int64 ns stamp has at most 19); remember the first
   * dropped digit for rounding. */
  unsigned long long mant = 0;
  int exp10 = 0, ndig = 0, seen = 0, dropped = -1;
  for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, seen = 1) {
    if (ndig < 19) {
      if (mant || s[i] != '0') ndig++;
      mant = mant * 10 + (unsigned)(s[i] - '0');
    } else {
      if (dropped < 0) dropped = s[i] - '0';
      exp10++;
    }
  }
  if (i < n && s[i] == '.') {
    for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, seen = 1) {
      if (ndig < 19) {
        if (mant || s[i] != '0') ndig++;
        mant = mant * 10 + (unsigned)(s[i] - '0');
        exp10--;
      } else if (dropped < 0) {
        dropped = s[i] - '0';
      }
    }
  }
  if (!seen) return -1;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    int eneg = 0, e = 0, edig = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, edig++)
      if (e < 10000) e = e * 10 + (s[i] - '0');
    if (!edig) return -1;
    exp10 += eneg ? -e : e;
  }
  if (i != n) return -1;
  exp10 += scale;
  if (mant == 0) {
    *out = 0;
    return 0;
  }
  int round_up = 0;
  if (exp10 > 0) {
    for (; exp10 > 0; exp10--) {
      if (mant > (unsigned long long)INT64_MAX / 10) return -1;
      mant *= 10;
    }
  } else if (exp10 == 0) {
    round_up = dropped >= 5;
  } else {
    int last = 0;
    for (; exp10 < 0 && mant; exp10++) {
      last = (int)(mant % 10);
      mant /= 10;
    }
    round_up = exp10 == 0 && last >= 5; /* digits still to drop: the value is below half a unit */
  }
  if (round_up) mant++;
  if (mant > (unsigned long long)INT64_MAX) return -1;
  *out = neg ? -(int64_t)mant : (int64_t)mant;
  return 0;
}

int asc_decimal_i64(const char *s, size_t n, int64_t *out) {
  const char *t = s;
  size_t m = asc_trim(&t, n);
  for (size_t i = 0; i < m; i++)
    if (t[i] == '.') {
      for (size_t j = i + 1; j < m; j++)
        if (t[j] != '0') return -1;
      break;
    }
  return asc_decimal_scaled(s, n, 0, out);
}

/* Clinger's fast path: up to 15 significant digits and a power of ten up to 22 give the
 * correctly rounded double by one exact multiplication or division. */
static int fast_f64(const char *s, size_t n, double *out) {
  static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  size_t i = 0;
  int neg = 0;
  if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  unsigned long long m = 0;
  int digits = 0, frac = 0, seen = 0;
  for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, seen = 1)
    if ((m = m * 10 + (unsigned)(s[i] - '0')) != 0) digits++;
  if (i < n && s[i] == '.')
    for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, seen = 1, frac++)
      if ((m = m * 10 + (unsigned)(s[i] - '0')) != 0) digits++;
  if (!seen || i != n || digits > 15 || frac > 22) return -1;
  double d = (double)m / p10[frac];
  *out = neg ? -d : d;
  return 0;
}

int asc_decimal_f64(const char *s, size_t n, double *out) {
  n = asc_trim(&s, n);
  if (n >= 2 && s[0] == '"' && s[n - 1] == '"') s++, n -= 2, n = asc_trim(&s, n);
  if (n == 0 || n >= 64) return -1;
  if (fast_f64(s, n, out) == 0) return 0;
  char buf[64];
  memcpy(buf, s, n);
  buf[n] = '\0';
  /* decimal notation only: strtod would also take inf, nan, infinity and hex floats, values no
   * profiler writes and no JSON output can carry */
  if (strspn(buf, "0123456789+-.eE") != n) return -1;
  char *end;
  errno = 0;
  double d = strtod(buf, &end);
  if (end != buf + n || errno == ERANGE || !isfinite(d)) return -1;
  *out = d;
  return 0;
}

/* Profiler values are mostly short decimals (18816.5, 954.3701171875): find the fewest
 * decimals k with x * 10^k whole and (m / 10^k) == x exactly (a correctly rounded division,
 * so it reads back as x), and print m with integer arithmetic. */
static size_t format_short_decimal(double x, char *buf) {
  static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12};
  for (int k = 0; k <= 12; k++) {
    double y = x * p10[k];
    if (y != floor(y) || fabs(y) >= 9007199254740992.0) continue;
    long long m = (long long)y;
    if ((double)m / p10[k] != x) continue;
    /* x * 10^k can round to a whole number one k after the shortest: drop the zeros it adds */
    while (k > 0 && m % 10 == 0) m /= 10, k--;
    char digits[32];
    unsigned long long u = m < 0 ? (unsigned long long)(-m) : (unsigned long long)m;
    int nd = 0;
    do {
      digits[nd++] = (char)('0' + u % 10);
      u /= 10;
    } while (u);
    while (nd <= k) digits[nd++] = '0'; /* at least one digit before the point */
    size_t o = 0;
    if (m < 0) buf[o++] = '-';
    for (int i = nd - 1; i >= 0; i--) {
      buf[o++] = digits[i];
      if (i == k && k > 0) buf[o++] = '.';
    }
    buf[o] = '\0';
    return o;
  }
  return 0;
}

/* Memory totals are binary fractions (19071.576171875 = 9764647 / 2^9): such a value is exactly
 * m * 5^j / 10^j, and with at most 15 significant digits that exact text is also the shortest
 * one that reads back. Integer arithmetic only; 0 when x is not of that kind. */
static size_t format_binary_fraction(double x, char *buf) {
  uint64_t bits;
  memcpy(&bits, &x, 8);
  int neg = (int)(bits >> 63), bexp = (int)((bits >> 52) & 0x7FF);
  uint64_t mant = bits & ((1ULL << 52) - 1);
  if (bexp == 0 || bexp == 0x7FF) return 0; /* subnormal, inf, nan */
  mant |= 1ULL << 52;
  int e = bexp - 1075; /* x = mant * 2^e */
  while (!(mant & 1) && e < 0) mant >>= 1, e++;
  if (e > 0) {
    if (e > 10 || mant > (UINT64_MAX >> e)) return 0;
    mant <<= e;
    e = 0;
  }
  int j = -e; /* decimals */
  if (j > 20) return 0;
  static const uint64_t p5[] = {1ULL,
                                5ULL,
                                25ULL,
                                125ULL,
                                625ULL,
                                3125ULL,
                                15625ULL,
                                78125ULL,
                                390625ULL,
                                1953125ULL,
                                9765625ULL,
                                48828125ULL,
                                244140625ULL,
                                1220703125ULL,
                                6103515625ULL,
                                30517578125ULL,
                                152587890625ULL,
                                762939453125ULL,
                                3814697265625ULL,
                                19073486328125ULL,
                                95367431640625ULL};
  if (mant > UINT64_MAX / p5[j]) return 0;
  uint64_t digits = mant * p5[j];
  char tmp[32];
  int nd = 0;
  for (uint64_t d = digits; d; d /= 10) tmp[nd++] = (char)('0' + d % 10);
  int lead = 0; /* significant digits: leading zeros of the fraction do not count */
  while (lead < nd && tmp[nd - 1 - lead] == '0') lead++;
  if (nd - lead > 15) return 0;
  while (nd <= j) tmp[nd++] = '0';
  size_t o = 0;
  if (neg) buf[o++] = '-';
  for (int i = nd - 1; i >= 0; i--) {
    buf[o++] = tmp[i];
    if (i == j && j > 0) buf[o++] = '.';
  }
  buf[o] = '\0';
  return o;
}

size_t asc_format_double(double x, char *buf) {
  buf[0] = '\0';
  if (!isfinite(x)) return 0;
  if (x == 0) return (size_t)snprintf(buf, 32, "%s", signbit(x) ? "-0" : "0");
  size_t n = format_binary_fraction(x, buf);
  if (n) return n;
  n = format_short_decimal(x, buf);
  if (n) return n;
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, 32, "%.*g", prec, x);
    if (strtod(buf, NULL) == x) break;
  }
  return strlen(buf);
}

void asc_dcache_init(asc_dcache *c) { memset(c->len, 0, sizeof c->len); }

const char *asc_format_double_cached(asc_dcache *c, double x, int point, size_t *len) {
  point = point != 0;
  uint64_t b;
  memcpy(&b, &x, 8);
  size_t h = (size_t)((b * 0x9E3779B97F4A7C15ULL) >> (64 - ASC_DCACHE_BITS));
  char *t = c->text[h];
  if (c->len[h] && c->bits[h] == b && c->point[h] == point) {
    *len = c->len[h];
    return t;
  }
  size_t n = asc_format_double(x, t);
  if (!n) {
    *len = 0;
    return t;
  }
  if (point && !memchr(t, '.', n) && !memchr(t, 'e', n)) memcpy(t + n, ".0", 3), n += 2;
  c->bits[h] = b;
  c->point[h] = (unsigned char)point;
  c->len[h] = (unsigned char)n;
  *len = n;
  return t;
}

/* Digits of u written backwards from end, two at a time (timestamps have 13 to 19 digits and
 * millions of rows); returns the start. */
static char *utoa_back(unsigned long long u, char *end) {
  static const char pairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  while (u >= 100) {
    const char *p = pairs + 2 * (u % 100);
    u /= 100;
    *--end = p[1];
    *--end = p[0];
  }
  if (u >= 10) {
    const char *p = pairs + 2 * u;
    *--end = p[1];
    *--end = p[0];
  } else {
    *--end = (char)('0' + u);
  }
  return end;
}

size_t asc_format_int(int64_t v, char *buf) {
  char tmp[24];
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
  char *s = utoa_back(u, tmp + sizeof tmp);
  size_t n = 0;
  if (v < 0) buf[n++] = '-';
  size_t k = (size_t)(tmp + sizeof tmp - s);
  memcpy(buf + n, s, k);
  n += k;
  buf[n] = '\0';
  return n;
}

size_t asc_format_scaled(int64_t v, int digits, char *buf) {
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
  unsigned long long unit = 1;
  for (int i = 0; i < digits; i++) unit *= 10;
  unsigned long long whole = u / unit, frac = u % unit;
  int nd = digits;
  if (frac == 0) {
    nd = 1;
  } else {
    while (frac % 10 == 0) frac /= 10, nd--;
  }
  char tmp[48];
  char *end = tmp + sizeof tmp;
  char *s = utoa_back(frac, end);
  while (end - s < nd) *--s = '0';
  *--s = '.';
  s = utoa_back(whole, s);
  if (v < 0) *--s = '-';
  size_t n = (size_t)(end - s);
  memcpy(buf, s, n);
  buf[n] = '\0';
  return n;
}
