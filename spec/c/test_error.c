/* Errors keep their template and each argument formatted alone, so a front end can put them in
 * a translated template; the English text is formatted as before. */
#include <string.h>

#include "ascope/error.h"
#include "ctest.h"

int main(void) {
  asc_error e;
  CHECK(asc_fail(&e, "f.csv", 27, 2, 3, "a %d b %s c %zu d %.*s e %lld %% f %5.2f", 42, "str", (size_t)7, 3,
                 "abcdef", -9LL, 3.14159) == -1);
  CHECK(strcmp(e.msg, "a 42 b str c 7 d abc e -9 % f  3.14") == 0);
  CHECK(strcmp(e.fmt, "a %d b %s c %zu d %.*s e %lld %% f %5.2f") == 0);
  CHECK(e.nargs == 6);
  CHECK(strcmp(asc_error_arg(&e, 0), "42") == 0);
  CHECK(strcmp(asc_error_arg(&e, 1), "str") == 0);
  CHECK(strcmp(asc_error_arg(&e, 2), "7") == 0);
  CHECK(strcmp(asc_error_arg(&e, 3), "abc") == 0); /* the precision taken from the arguments */
  CHECK(strcmp(asc_error_arg(&e, 4), "-9") == 0);
  CHECK(strcmp(asc_error_arg(&e, 5), " 3.14") == 0); /* width and precision kept */
  CHECK(strcmp(asc_error_arg(&e, 6), "") == 0 && strcmp(asc_error_arg(&e, -1), "") == 0);
  char out[2048];
  asc_error_format(&e, out, sizeof out);
  CHECK(strcmp(out, "f.csv:2:3 (byte 27): a 42 b str c 7 d abc e -9 % f  3.14") == 0);

  /* more arguments than are kept: the first ASC_ERROR_MAX_ARGS, the message whole */
  asc_fail(&e, NULL, -1, 0, 0, "%d %d %d %d %d %d %d %d", 1, 2, 3, 4, 5, 6, 7, 8);
  CHECK(e.nargs == ASC_ERROR_MAX_ARGS && strcmp(asc_error_arg(&e, 5), "6") == 0);
  CHECK(strcmp(e.msg, "1 2 3 4 5 6 7 8") == 0);

  /* arguments longer than the room: cut, each still terminated, the ones without room left out */
  char big[700];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  asc_fail(&e, "p", -1, 0, 0, "%s|%s|%s", big, big, big);
  CHECK(e.nargs == 2);
  CHECK(strlen(asc_error_arg(&e, 0)) == 699);
  CHECK(strlen(asc_error_arg(&e, 1)) == sizeof e.args - 700 - 1);
  CHECK(strcmp(asc_error_arg(&e, 2), "") == 0);

  /* a text chosen at run time is its own template, without arguments */
  const char *why = "expected ':'";
  asc_fail_text(&e, "t.json", 5, 0, 0, why);
  CHECK(e.fmt == why && e.nargs == 0 && strcmp(e.msg, why) == 0);
  asc_error_format(&e, out, sizeof out);
  CHECK(strcmp(out, "t.json (byte 5): expected ':'") == 0);

  /* unsigned, hex, char and long conversions */
  asc_fail(&e, NULL, -1, 0, 0, "%u %x %c %ld %lu", 3u, 255u, 'q', -4L, 5UL);
  CHECK(e.nargs == 5 && strcmp(asc_error_arg(&e, 1), "ff") == 0 && strcmp(asc_error_arg(&e, 2), "q") == 0);
  CHECK(strcmp(asc_error_arg(&e, 3), "-4") == 0 && strcmp(asc_error_arg(&e, 4), "5") == 0);
  CHECK(asc_fail(NULL, "x", 0, 0, 0, "%s", "y") == -1);
  CTEST_END();
}
