/* Baseline for `make bench`: yajl parses the file with no callbacks at all. */
#include <stdio.h>
#include <stdlib.h>
#include <yajl/yajl_parse.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
  yajl_handle h = yajl_alloc(NULL, NULL, NULL);
  yajl_config(h, yajl_dont_validate_strings, 1);
  static char buf[1 << 20];
  size_t n;
  long long total = 0;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    if (yajl_parse(h, (unsigned char *)buf, n) != yajl_status_ok) return 1;
    total += (long long)n;
  }
  int ok = yajl_complete_parse(h) == yajl_status_ok;
  yajl_free(h);
  fclose(f);
  printf("%lld\n", total);
  return ok ? 0 : 1;
}
