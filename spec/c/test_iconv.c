/* Text re-encoding: GBK bytes of known Chinese text, growth past the first buffer, errors with
 * their byte offset. */
#include <stdlib.h>
#include <string.h>

#include "ascope/iconv.h"
#include "ctest.h"

static int converts_to(const char *in, const char *want, size_t want_n) {
  char *out;
  size_t n;
  asc_error err;
  if (asc_iconv("t", "UTF-8", "GBK", in, strlen(in), &out, &n, &err)) return 0;
  int ok = n == want_n && memcmp(out, want, n) == 0 && out[n] == '\0';
  free(out);
  return ok;
}

int main(void) {
  /* GB 2312: 中 D6D0, 文 CEC4, 卡 BFA8, 死 CBC0, 区 C7F8 */
  CHECK(converts_to("\xe4\xb8\xad\xe6\x96\x87", "\xd6\xd0\xce\xc4", 4));
  CHECK(converts_to("win\xe5\x8c\xba,1\r\n", "win\xc7\xf8,1\r\n", 9));
  CHECK(converts_to("", "", 0));
  /* ASCII keeps its size and fills the first buffer (n + 16 bytes) past its end: growth */
  size_t big = 100000;
  char *in = malloc(big + 1), *out;
  size_t n;
  asc_error err;
  CHECK(in != NULL);
  if (in) {
    memset(in, 'a', big);
    in[big] = '\0';
    CHECK(asc_iconv(NULL, "UTF-8", "UTF-16LE", in, big, &out, &n, &err) == 0 && n == 2 * big);
    if (n == 2 * big) CHECK(out[0] == 'a' && out[1] == 0 && out[2 * big - 2] == 'a');
    free(out);
    free(in);
  }
  CHECK(asc_iconv("x.csv", "UTF-8", "GBK", "ab\xff", 3, &out, &n, &err) == -1 && out == NULL);
  CHECK(err.offset == 2 && strcmp(err.file, "x.csv") == 0);
  CHECK(asc_iconv("x.csv", "UTF-8", "GBK", "a\xe4\xb8", 3, &out, &n, &err) == -1 && err.offset == 1);
  CHECK(strstr(err.msg, "ends inside") != NULL);
  CHECK(asc_iconv(NULL, "UTF-8", "NO-SUCH-ENCODING", "a", 1, &out, &n, &err) == -1);
  CTEST_END();
}
