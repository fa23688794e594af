/* JSON string decoding: known escapes decode to the bytes JSON means (a lone surrogate to its
 * own three bytes, as the scan always has), and comparing escaped text with decoded text in
 * place agrees with decoding both and comparing, for every pair of many awkward strings: this
 * is what lets json.scan find an escaped string again by its raw text without keeping it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ascope/json_unescape.h"
#include "ctest.h"

static int decodes_to(const char *raw, const char *want, size_t want_n) {
  char out[256];
  size_t n = asc_json_unescape(raw, strlen(raw), out);
  return n == want_n && memcmp(out, want, n) == 0 && asc_json_escaped_equal(raw, strlen(raw), want, want_n);
}
#define DECODES(raw, want) CHECK(decodes_to(raw, want, sizeof want - 1))

static void known(void) {
  DECODES("plain", "plain");
  DECODES("", "");
  DECODES("a;\\r\\nb", "a;\r\nb");
  DECODES("\\b\\f\\n\\r\\t\\/\\\\\\\"", "\b\f\n\r\t/\\\"");
  DECODES("\\u0041\\u00e9\\u4e2d", "A\xC3\xA9\xE4\xB8\xAD");
  DECODES("\\ud83d\\ude00", "\xF0\x9F\x98\x80");
  DECODES("\\uD83D\\uDE00x", "\xF0\x9F\x98\x80x");
  DECODES("\\ud83d lone", "\xED\xA0\xBD lone"); /* a high surrogate without its low one */
  DECODES("lone \\ude00", "lone \xED\xB8\x80"); /* a low one alone */
  DECODES("\\ud83d\\u0041", "\xED\xA0\xBD"
                            "A"); /* a high one before no low one */
  DECODES("\\u0000", "\0");
  DECODES("end\\\\", "end\\");
  DECODES("\\\"start", "\"start");
  DECODES("end\\\"", "end\"");
  DECODES("cut \\u12", "cut ?"); /* content the scan would have refused: still bounded */
  DECODES("trailing \\", "trailing \\");
  CHECK(!asc_json_escaped_equal("a\\nb", 4, "a\nc", 3));
  CHECK(!asc_json_escaped_equal("a\\nb", 4, "a\nbc", 4));
  CHECK(!asc_json_escaped_equal("a\\nb", 4, "a\n", 2));
  CHECK(!asc_json_escaped_equal("\\u00e9", 6, "\xC3", 1));
  CHECK(!asc_json_escaped_equal("\\u00e9", 6, "\xC3\xA9!", 3));
  CHECK(asc_json_escaped_equal("\\/usr\\/lib", 10, "/usr/lib", 8));
}

/* pieces of raw content, escaped and not, that decode alike in many ways */
static const char *const PIECES[] = {
    "a", "\\\\", "\\\"", "\\/", "/", "\\n", "\n", "\\r\\n", "\\u0041", "A", "\\ud83d", "\\ude00",
    "\\uD83D\\uDE00", "\xF0\x9F\x98\x80", "\\u00e9", "\xC3\xA9", "\\u0000", "\\u000a", ";",
    /* plain runs longer than a vector step */
    "/home/user/project/model.py(42): forward", "/home/user/project/model.py(42): forwarD",
    /* these differ from others above in their last byte only */
    "\\u00ea", "\\ude01", "\\ud83d\\ude01"};
enum { NP = sizeof PIECES / sizeof PIECES[0], NS = 600 };

static uint32_t rng = 12345;
static uint32_t next(void) { return rng = rng * 1103515245u + 12345u, rng >> 8; }

static void differential(void) {
  static char raw[NS][512], dec[NS][512];
  static size_t raw_n[NS], dec_n[NS];
  for (int i = 0; i < NS; i++) {
    size_t n = 0;
    for (uint32_t k = 0, parts = next() % 12; k < parts; k++) {
      const char *p = PIECES[next() % NP];
      memcpy(raw[i] + n, p, strlen(p));
      n += strlen(p);
    }
    raw_n[i] = n;
    dec_n[i] = asc_json_unescape(raw[i], n, dec[i]);
  }
  long agree = 0, equal = 0, pairs = 0;
  for (int i = 0; i < NS; i++)
    for (int j = 0; j < NS; j++) {
      int same = dec_n[i] == dec_n[j] && memcmp(dec[i], dec[j], dec_n[i]) == 0;
      agree += asc_json_escaped_equal(raw[i], raw_n[i], dec[j], dec_n[j]) == same;
      equal += same;
      pairs++;
    }
  CHECK(agree == pairs);
  CHECK(equal > NS * 2); /* pairs of different spellings of one text were among them */
  /* one byte short or one byte more than the decoded text is never equal */
  int never = 1;
  for (int i = 0; i < NS; i++) {
    if (dec_n[i]) never &= !asc_json_escaped_equal(raw[i], raw_n[i], dec[i], dec_n[i] - 1);
    dec[i][dec_n[i]] = 'x';
    never &= !asc_json_escaped_equal(raw[i], raw_n[i], dec[i], dec_n[i] + 1);
  }
  CHECK(never);
}

int main(void) {
  known();
  differential();
  CTEST_END();
}
