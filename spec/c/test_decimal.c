/* Exact decimal parsing: the property every time in ascope rests on. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/decimal.h"
#include "ctest.h"

static int64_t us(const char *s) {
  int64_t v = -42;
  if (asc_decimal_scaled(s, strlen(s), 3, &v)) return -1;
  return v;
}

int main(void) {
  CHECK(us("1736408883688177.930") == 1736408883688177930LL);
  CHECK(us("1779785515596661.420\t") == 1779785515596661420LL); /* trailing tab */
  CHECK(us("\"1000100\"") == 1000100000LL);                     /* quoted */
  CHECK(us("1000000.0") == 1000000000LL);
  CHECK(us("162.66") == 162660);
  CHECK(us("0.0005") == 1); /* 0.5 ns rounds half away from zero */
  CHECK(us("0.0004") == 0);
  CHECK(us("0.00006") == 0); /* far below half a unit */
  CHECK(us("-1.5") == -1500);
  CHECK(us("1.5e3") == 1500000);
  CHECK(us("1736405443863674.4") == 1736405443863674400LL);
  CHECK(us("abc") == -1);
  CHECK(us("") == -1);
  CHECK(us("1.2.3") == -1);
  CHECK(us("99999999999999999999") == -1); /* overflows int64 ns */
  int64_t i;
  CHECK(asc_decimal_i64("42", 2, &i) == 0 && i == 42);
  CHECK(asc_decimal_i64("42.0", 4, &i) == 0 && i == 42);
  CHECK(asc_decimal_i64("42.5", 4, &i) != 0);
  double d;
  CHECK(asc_decimal_f64(" 18816.5\t", 9, &d) == 0 && d == 18816.5);
  CHECK(asc_decimal_f64("N/A", 3, &d) != 0);
  CHECK(asc_decimal_f64("954.3701171875", 14, &d) == 0 && d == 954.3701171875);
  CHECK(asc_decimal_f64("-0.1", 4, &d) == 0 && d == -0.1);
  CHECK(asc_decimal_f64("1e3", 3, &d) == 0 && d == 1000.0);
  CHECK(asc_decimal_f64("12345678901234567890", 20, &d) == 0 && d == 12345678901234567890.0);
  int same = 1;
  char txt[64];
  for (int i = 0; i < 50000; i++) {
    double x = (double)(i * 7919 % 100003) / 1024.0 + (double)i * 1e-3;
    int k = snprintf(txt, sizeof txt, "%.9f", x);
    double a, b = strtod(txt, NULL);
    same &= asc_decimal_f64(txt, (size_t)k, &a) == 0 && a == b;
  }
  CHECK(same); /* the fast path agrees with strtod */
  CHECK(asc_is_na("N/A", 3) && asc_is_na("", 0) && asc_is_na(" \t", 2) && !asc_is_na("0", 1));
  char buf[32];
  CHECK(asc_format_double(0.1, buf) == 3 && strcmp(buf, "0.1") == 0);
  CHECK(asc_format_double(1024.0, buf) && strcmp(buf, "1024") == 0);
  CHECK(asc_format_double(NAN, buf) == 0);
  CHECK(asc_format_double(954.3701171875, buf) && strcmp(buf, "954.3701171875") == 0);
  CHECK(asc_format_double(-0.5, buf) && strcmp(buf, "-0.5") == 0);
  CHECK(asc_format_double(0.001, buf) && strcmp(buf, "0.001") == 0);
  CHECK(asc_format_double(1e300, buf) && strcmp(buf, "1e+300") == 0);
  CHECK(asc_format_double(1.0 / 3.0, buf) && strcmp(buf, "0.3333333333333333") == 0);
  /* every value printed reads back as itself */
  int all_ok = 1;
  for (int i = 1; i < 20000; i++) {
    double x = (double)i * 0.37 / 7.0 - 50.0;
    size_t n = asc_format_double(x, buf);
    all_ok &= n > 0 && strtod(buf, NULL) == x;
  }
  CHECK(all_ok);
  CHECK(asc_format_double(19071.576171875, buf) && strcmp(buf, "19071.576171875") == 0);
  CHECK(asc_format_double(19071.60547, buf) && strcmp(buf, "19071.60547") == 0);
  CHECK(asc_format_double(-18816.5, buf) && strcmp(buf, "-18816.5") == 0);
  CHECK(asc_format_double(0.0625, buf) && strcmp(buf, "0.0625") == 0);
  CHECK(asc_format_double(1536.0, buf) && strcmp(buf, "1536") == 0);
  CHECK(asc_format_double(1e20, buf) && strcmp(buf, "1e+20") == 0);
  /* binary fractions of every size read back as themselves */
  int bin_ok = 1;
  for (int i = 1; i < 100000; i++) {
    double x = (double)(i * 7919 % 1000003) / (double)(1 << (i % 13)) + (double)(i % 7) * 1024.0;
    size_t n = asc_format_double(x, buf);
    bin_ok &= n > 0 && strtod(buf, NULL) == x && strlen(buf) <= 25;
  }
  CHECK(bin_ok);
  CHECK(asc_format_scaled(1000100000, 6, buf) == 6 && strcmp(buf, "1000.1") == 0);
  CHECK(asc_format_scaled(6000000000, 6, buf) && strcmp(buf, "6000.0") == 0);
  CHECK(asc_format_scaled(1736405443871259720, 6, buf) && strcmp(buf, "1736405443871.25972") == 0);
  CHECK(asc_format_scaled(-1500, 3, buf) && strcmp(buf, "-1.5") == 0);
  CHECK(asc_format_scaled(5, 3, buf) && strcmp(buf, "0.005") == 0);
  /* the cache gives what formatting gives, through hits, misses and evictions of one slot */
  asc_dcache cache;
  asc_dcache_init(&cache);
  int cache_ok = 1;
  unsigned seed = 7;
  for (int i = 0; i < 200000; i++) {
    seed = seed * 1103515245u + 12345u;
    int k = (int)(seed >> 16) % 700;
    double x = k % 5 == 0 ? (double)(k * 64) : (double)k / 8.0 + (double)(k % 3) * 0.1;
    int point = i % 2;
    size_t n, m = asc_format_double(x, buf);
    const char *t = asc_format_double_cached(&cache, x, point, &n);
    if (point && !strchr(buf, '.') && !strchr(buf, 'e')) strcat(buf, ".0"), m += 2;
    cache_ok &= n == m && memcmp(t, buf, n) == 0;
  }
  CHECK(cache_ok);
  size_t cn;
  asc_format_double_cached(&cache, NAN, 1, &cn);
  CHECK(cn == 0);
  CHECK(strcmp(asc_format_double_cached(&cache, 20000.0, 1, &cn), "20000.0") == 0 && cn == 7);
  CHECK(memcmp(asc_format_double_cached(&cache, 20000.0, 0, &cn), "20000", 5) == 0 && cn == 5);
  CHECK(asc_format_scaled(1234567890123456789, 0, buf) && strcmp(buf, "1234567890123456789.0") == 0);
  CHECK(asc_format_int(-42, buf) == 3 && strcmp(buf, "-42") == 0);
  CHECK(asc_format_int(INT64_MAX, buf) && strcmp(buf, "9223372036854775807") == 0);
  /* plain decimals take a short path; the same text with "e0" after it takes the general one,
   * and both give the same answer (or both refuse): random digits, points, signs and scales,
   * with leading zeros, 19 and 20 digits and values next to INT64_MAX */
  int same_paths = 1;
  for (int i = 0; i < 300000; i++) {
    seed = seed * 1103515245u + 12345u;
    char txt[48], gen[52];
    size_t k = 0, len = 1 + (seed >> 8) % 21, point = (seed >> 13) % (len + 2);
    if ((seed >> 20) % 4 == 0) txt[k++] = '-';
    for (size_t d = 0; d < len; d++) {
      if (d == point) txt[k++] = '.';
      seed = seed * 1103515245u + 12345u;
      txt[k++] = (char)('0' + ((seed >> 16) % 10 < 2 ? 0 : (seed >> 17) % 10));
    }
    if (i % 1000 == 0) k = (size_t)sprintf(txt, "%lld.%u", (long long)(INT64_MAX / 1000 - i / 1000), i % 1000);
    txt[k] = '\0';
    int scale = (int)((seed >> 24) % 10);
    int64_t a = 0, b = 0;
    snprintf(gen, sizeof gen, "%se0", txt);
    int ra = asc_decimal_scaled(txt, k, scale, &a), rb = asc_decimal_scaled(gen, strlen(gen), scale, &b);
    same_paths &= ra == rb && (ra != 0 || a == b);
  }
  CHECK(same_paths);
  CTEST_END();
}
