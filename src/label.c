/* Report labels capped in bytes (see ascope/label.h). */
#include "ascope/label.h"

size_t asc_label_cut(const char *s, size_t n, size_t max) {
  if (n <= max) return n;
  size_t cut = max;
  /* step back over continuation bytes (10xxxxxx) to the start of a character */
  while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
  return cut;
}
