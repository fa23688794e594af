/* POSIX extended regular expressions: matches, case folding, bounds and invalid patterns. */
#include <string.h>

#include "ascope/regex.h"
#include "ctest.h"

int main(void) {
  asc_regex *re;
  asc_error err;
  const char *p = "^(Ascend Hardware|HCCL)/Stream [0-9]+$";
  CHECK(asc_regex_compile(&re, p, strlen(p), 0, &err) == 0);
  CHECK(asc_regex_search(re, "Ascend Hardware/Stream 12", 25) == 1);
  CHECK(asc_regex_search(re, "Ascend Hardware/Stream x", 24) == 0);
  CHECK(asc_regex_search(re, "ascend hardware/Stream 1", 24) == 0);
  /* the length bounds the text: a longer buffer is not read past len */
  CHECK(asc_regex_search(re, "HCCL/Stream 4 and more", 13) == 1);
  asc_regex_free(re);

  CHECK(asc_regex_compile(&re, "send|recv", 9, ASC_REGEX_ICASE, &err) == 0);
  CHECK(asc_regex_search(re, "hcom_Recv_", 10) == 1);
  CHECK(asc_regex_search(re, "a\0recv", 6) == 1); /* NUL bytes inside the text */
  CHECK(asc_regex_search(re, "", 0) == 0);
  asc_regex_free(re);

  CHECK(asc_regex_compile(&re, "(unclosed", 9, 0, &err) == -1);
  CHECK(re == NULL);
  CHECK(err.msg[0] != '\0');
  CHECK(asc_regex_compile(&re, "a\0b", 3, 0, &err) == -1);
  static char big[ASC_REGEX_MAX_PATTERN + 2];
  memset(big, 'a', sizeof big - 1);
  CHECK(asc_regex_compile(&re, big, sizeof big - 1, 0, &err) == -1);
  asc_regex_free(NULL);
  CTEST_END();
}
