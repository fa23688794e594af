/* Linear Lua patterns: the matches string.find gives (values worked out from Lua's rules), the
 * patterns refused, and a time bound on a subject made to defeat backtracking. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ascope/lpat.h"
#include "ctest.h"

/* string.find(s, pat) as "start end cap" (1-based, Lua's numbers), or "nil" */
static const char *find(const char *pat, int flags, const char *s) {
  static char out[64];
  const char *why = NULL;
  asc_lpat *p = asc_lpat_compile(pat, strlen(pat), flags, &why);
  if (!p) return "refused";
  asc_lpat_match m;
  if (!asc_lpat_find(p, s, strlen(s), 0, &m)) {
    asc_lpat_free(p);
    return "nil";
  }
  snprintf(out, sizeof out, "%zu %zu %.*s", m.start + 1, m.end, (int)(m.cap_end - m.cap_start),
           s + m.cap_start);
  asc_lpat_free(p);
  return out;
}

#define EQ(a, b) CHECK(strcmp((a), (b)) == 0)

int main(void) {
  EQ(find("task_id[=:]%s*(%d+)", 0, "device_id=0, task_id= 12, x"), "14 24 12");
  EQ(find("origin_op_name %[([^%]]+)%]", 0, "Error happened, origin_op_name [Moe_V2], op"), "17 39 Moe_V2");
  EQ(find("(retCode=0x%x+)", 0, "failed, retCode=0x26"), "9 20 retCode=0x26");
  EQ(find("(errcode:%(0x%x+)", 0, "x errcode:(0x800000, 0"), "3 19 errcode:(0x800000");
  EQ(find("%f[%w](E[ZEILK]%d%d%d%d)%f[%W]", 0, "XEZ9999 EZ9999: y"), "9 14 EZ9999");
  EQ(find("[Aa]icore kernel", 0, "an aicore kernel"), "4 16 aicore kernel");
  EQ(find("NPU outt? of", 0, "NPU out of memory"), "1 10 NPU out of");
  EQ(find("^%[(%u+)%]%s+([%w_%-]+)%(", 0, "[ERROR] GE(1,p)"), "1 11 ERROR");
  EQ(find("^%[?(%d+)%]?%s*(.*)$", 0, "[3977663]msg here"), "1 17 3977663");
  EQ(find("^%[?(%d+)%]?%s*(.*)$", 0, "msg 12"), "nil");
  EQ(find("a-", 0, "aaa"), "1 0 ");
  EQ(find("a-$", 0, "baaa"), "2 4 aaa");
  EQ(find("x.-", 0, "axyz"), "2 2 x");
  EQ(find("", 0, "abc"), "1 0 ");
  EQ(find("c$", 0, "abc"), "3 3 c");
  EQ(find("a$b", 0, "xa$b"), "2 4 a$b");
  EQ(find("[]]", 0, "a]"), "2 2 ]");
  EQ(find("[^%d]+", 0, "12ab3"), "3 4 ab");
  EQ(find("%.", 0, "a.b"), "2 2 .");
  /* a whole word: not inside PAGE_SIZE, found further on */
  EQ(find("GE", ASC_LPAT_WORD, "PAGE_SIZE GE ready"), "11 12 GE");
  EQ(find("GE", ASC_LPAT_WORD, "PAGE_SIZE"), "nil");
  EQ(find("E1%d%d%d%d", ASC_LPAT_WORD, "E1000000 E19999:"), "10 15 E19999");
  EQ(find("%d+", ASC_LPAT_WORD, "12a 345"), "5 7 345");
  /* outside the subset: Lua does them */
  EQ(find("%b()", 0, "(a)"), "refused");
  EQ(find("(a)%1", 0, "aa"), "refused");
  EQ(find("()a", 0, "a"), "refused");
  EQ(find("topo.-timeout", 0, "topo timeout"), "refused");
  EQ(find("%d+%d", 0, "123"), "refused");
  EQ(find("a*%f[%w]", 0, "a"), "refused");
  EQ(find("[unclosed", 0, "x"), "refused");
  EQ(find("(open", 0, "x"), "refused");

  /* the literal search agrees with memmem at every place, across the 16-byte steps */
  {
    char hay[80], lit[9];
    int same = 1;
    for (size_t k = 1; k <= 8; k++) {
      for (size_t n = 0; n < sizeof hay; n++) {
        for (size_t at = 0; at + k <= n + 1; at++) {
          memset(hay, 'a', sizeof hay);
          for (size_t j = 0; j < k; j++) lit[j] = (char)('b' + (j % 3));
          if (at + k <= n) memcpy(hay + at, lit, k);
          hay[n / 2] = lit[0]; /* a false start */
          const char *want = memmem(hay, n, lit, k), *got = asc_find_literal(hay, n, lit, k);
          same &= want == got;
        }
      }
    }
    CHECK(same);
    size_t nl = asc_count_byte("a\nb\n\n0123456789abcdef\n0123456789abcdef\n", 39, '\n');
    CHECK(nl == 5);
    static char big[10007]; /* more than 255 steps of 16 bytes: the lane sums are added up */
    size_t want_nl = 0;
    for (size_t i = 0; i < sizeof big; i++) want_nl += (big[i] = (i % 7 == 3) ? '\n' : 'x') == '\n';
    CHECK(asc_count_byte(big, sizeof big, '\n') == want_nl);
  }

  /* linear: 4 MB of a classifier's words, no match; Lua's backtracking would take hours */
  size_t n = 4u << 20;
  char *s = malloc(n + 1);
  CHECK(s != NULL);
  for (size_t i = 0; i < n; i++) s[i] = "task_id "[i % 8];
  s[n] = '\0';
  const char *why;
  asc_lpat *p = asc_lpat_compile("task_id%s*%d+", 13, 0, &why);
  asc_lpat *q = asc_lpat_compile("%a+%d", 5, 0, &why);
  memset(s, 'a', n / 2);
  CHECK(p && q);
  clock_t t0 = clock();
  asc_lpat_match m;
  CHECK(!asc_lpat_find(p, s, n, 0, &m));
  CHECK(!asc_lpat_find(q, s, n, 0, &m));
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  CHECK(secs < 2.0);
  asc_lpat_free(p);
  asc_lpat_free(q);
  free(s);
  CTEST_END();
}
