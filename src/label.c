/* Report labels capped in bytes (see ascope/label.h). */
#include "ascope/label.h"

size_t asc_label_cut(const char *s, size_t n, size_t max) {
  if (n <= max) return n;
  size_t cut = max;
  /* step back over continuation bytes (10xxxxxx) to the start of a character: three at most,
   * as a UTF-8 character has four bytes at most; text in another encoding (GBK's bytes are
   * often in that range) is then cut where it is, not to nothing */
  while (cut > 0 && max - cut < 3 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
  return ((unsigned char)s[cut] & 0xC0) == 0x80 ? max : cut;
}
