/* CSV output: RFC 4180 quoting (fields with commas, quotes, CR or LF are quoted, quotes
 * doubled), written to a temporary file and renamed into place on close. */
#include <stdlib.h>
#include <string.h>

#include "ascope/csv.h"
#include "ascope/fs.h"

struct asc_csv_writer {
  asc_atomic out;
  int row_started;
};

int asc_csv_writer_open(const char *path, int bom, asc_csv_writer **out, asc_error *err) {
  asc_csv_writer *w = calloc(1, sizeof *w);
  if (!w) return asc_fail(err, path, -1, 0, 0, "out of memory");
  if (asc_atomic_open(&w->out, path, err)) {
    free(w);
    return -1;
  }
  if (bom) fputs("\xEF\xBB\xBF", w->out.f);
  *out = w;
  return 0;
}

int asc_csv_write_field(asc_csv_writer *w, const char *s, size_t n) {
  FILE *f = w->out.f;
  if (w->row_started) putc(',', f);
  w->row_started = 1;
  int quote = n > 0 && (s[0] == ' ' || s[n - 1] == ' ');
  quote = quote || memchr(s, '\n', n) || memchr(s, '"', n) || memchr(s, ',', n) || memchr(s, '\r', n);
  if (!quote) return fwrite(s, 1, n, f) == n ? 0 : -1;
  putc('"', f);
  /* write the runs between quotes whole; each quote is written twice */
  const char *p = s, *end = s + n;
  while (p < end) {
    const char *q = memchr(p, '"', (size_t)(end - p));
    size_t run = (size_t)((q ? q + 1 : end) - p);
    if (fwrite(p, 1, run, f) != run) return -1;
    if (q) putc('"', f);
    p += run;
  }
  return putc('"', f) == EOF ? -1 : 0;
}

int asc_csv_end_row(asc_csv_writer *w) {
  w->row_started = 0;
  return putc('\n', w->out.f) == EOF ? -1 : 0;
}

int asc_csv_writer_close(asc_csv_writer *w, asc_error *err) {
  int rc = asc_atomic_commit(&w->out, err);
  free(w);
  return rc;
}

void asc_csv_writer_abort(asc_csv_writer *w) {
  asc_atomic_abort(&w->out);
  free(w);
}
