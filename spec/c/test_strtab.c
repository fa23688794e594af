/* Interning: equal strings get equal ids across growth of the table. */
#include <stdio.h>
#include <string.h>

#include "ascope/strtab.h"
#include "ctest.h"

int main(void) {
  asc_strtab *t = asc_strtab_new();
  CHECK(t != NULL);
  uint32_t a, b, c;
  CHECK(asc_strtab_intern(t, "aten::empty", 11, &a) == 0);
  CHECK(asc_strtab_intern(t, "aten::matmul", 12, &b) == 0);
  CHECK(asc_strtab_intern(t, "aten::empty", 11, &c) == 0);
  CHECK(a != 0 && a != b && a == c);
  uint32_t ids[5000];
  char buf[32];
  for (int i = 0; i < 5000; i++) {
    int n = snprintf(buf, sizeof buf, "s%d", i);
    asc_strtab_intern(t, buf, (size_t)n, &ids[i]);
  }
  int same = 1;
  for (int i = 0; i < 5000; i++) {
    int n = snprintf(buf, sizeof buf, "s%d", i);
    uint32_t id;
    asc_strtab_intern(t, buf, (size_t)n, &id);
    size_t len;
    const char *s = asc_strtab_get(t, id, &len);
    same &= id == ids[i] && len == (size_t)n && memcmp(s, buf, len) == 0;
  }
  CHECK(same);
  CHECK(asc_strtab_count(t) == 5002);
  CHECK(asc_strtab_get(t, 0, NULL) == NULL);
  uint32_t e;
  CHECK(asc_strtab_intern(t, "", 0, &e) == 0 && e != 0);
  asc_strtab_free(t);
  CTEST_END();
}
