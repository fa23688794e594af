/* Baseline for `make bench`: libcsv parses the file, callbacks count fields and rows only. */
#include <csv.h>
#include <stdio.h>

static void on_field(void *s, size_t n, void *ud) {
  (void)s, (void)n;
  ++*(long long *)ud;
}
static void on_row(int c, void *ud) {
  (void)c;
  (void)ud;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
  struct csv_parser p;
  csv_init(&p, CSV_STRICT | CSV_REPALL_NL);
  static char buf[1 << 18];
  size_t n;
  long long fields = 0;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    if (csv_parse(&p, buf, n, on_field, on_row, &fields) != n) return 1;
  csv_fini(&p, on_field, on_row, &fields);
  csv_free(&p);
  fclose(f);
  printf("%lld\n", fields);
  return 0;
}
