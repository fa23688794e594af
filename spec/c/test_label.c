/* Report labels are cut on a UTF-8 character boundary, and text in another encoding where it
 * is: the same rule as ascope.fmt.label. */
#include <string.h>

#include "ascope/label.h"
#include "ctest.h"

int main(void) {
  const char *zh = "\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97"; /* 中文字: three bytes each */
  CHECK(asc_label_cut(zh, 9, 9) == 9);                     /* fits */
  CHECK(asc_label_cut(zh, 9, 4) == 3);
  CHECK(asc_label_cut(zh, 9, 5) == 3);
  CHECK(asc_label_cut(zh, 9, 6) == 6);
  CHECK(asc_label_cut(zh, 9, 2) == 0);
  const char *emoji = "\xf0\x9f\x98\x80\xf0\x9f\x98\x80"; /* two of four bytes */
  CHECK(asc_label_cut(emoji, 8, 7) == 4);
  CHECK(asc_label_cut(emoji, 8, 3) == 0);
  char gbk[3000]; /* 啊 in GBK, both bytes 10xxxxxx: cut at the limit, not back to the start */
  memcpy(gbk, "EE1001 ", 7);
  for (size_t i = 7; i < sizeof gbk; i++) gbk[i] = (char)(i % 2 ? 0xb0 : 0xa1);
  CHECK(asc_label_cut(gbk, sizeof gbk, 1000) == 1000);
  CHECK(asc_label_cut("abcdef", 6, 3) == 3);
  CTEST_END();
}
