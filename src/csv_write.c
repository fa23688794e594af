/* CSV output: RFC 4180 quoting (fields with commas, quotes, CR or LF are quoted, quotes
 * doubled), written to a temporary file and renamed into place on close. */
#include <stdlib.h>
#include <string.h>

#include "ascope/csv.h"
#include "ascope/fs.h"
#include "ascope/simd.h"
#include "ascope/spool.h"

struct asc_csv_writer {
  asc_atomic out;
  int spool; /* out is a spool (asc_csv_writer_spool): saved, never renamed into place */
  int row_started;
  char *buf; /* rows are assembled here and written in large blocks */
  size_t n, cap;
};

static int flush(asc_csv_writer *w) {
  if (asc_atomic_write(&w->out, w->buf, w->n)) return -1;
  w->n = 0;
  return 0;
}

static int put(asc_csv_writer *w, const char *s, size_t n) {
  if (n == 0) return 0;
  if (w->n + n > w->cap) {
    if (flush(w)) return -1;
    if (n > w->cap) return asc_atomic_write(&w->out, s, n);
  }
  memcpy(w->buf + w->n, s, n);
  w->n += n;
  return 0;
}

static int putch(asc_csv_writer *w, char c) {
  if (w->n == w->cap && flush(w)) return -1;
  w->buf[w->n++] = c;
  return 0;
}

/* A writer on an atomic file at path, or on a spool when path is NULL. */
static int writer_open(const char *path, int bom, asc_csv_writer **out, asc_error *err) {
  asc_csv_writer *w = calloc(1, sizeof *w);
  if (!w) return asc_fail(err, path, -1, 0, 0, "out of memory");
  w->cap = 1 << 20;
  if (!(w->buf = malloc(w->cap))) {
    free(w);
    return asc_fail(err, path, -1, 0, 0, "out of memory");
  }
  w->spool = path == NULL;
  if (w->spool ? asc_spool_open(&w->out, err) : asc_atomic_open(&w->out, path, err)) {
    free(w->buf);
    free(w);
    return -1;
  }
  if (bom) put(w, "\xEF\xBB\xBF", 3);
  *out = w;
  return 0;
}

int asc_csv_writer_open(const char *path, int bom, asc_csv_writer **out, asc_error *err) {
  if (!path) return asc_fail(err, NULL, -1, 0, 0, "no path");
  return writer_open(path, bom, out, err);
}

int asc_csv_writer_spool(int bom, asc_csv_writer **out, asc_error *err) {
  return writer_open(NULL, bom, out, err);
}

int asc_csv_writer_save(asc_csv_writer *w, const char *path, asc_error *err) {
  if (!w->spool) return asc_fail(err, path, -1, 0, 0, "not a spool");
  flush(w); /* a failure is kept in w->out and reported by the save */
  return asc_spool_save(&w->out, path, err);
}

/* One pass over the field (the long ones are log lines on every row of a failure storm). */
int asc_csv_quoting(const char *s, size_t n) {
  int quote = 0, special = n > 0 && (s[0] == ' ' || s[n - 1] == ' ');
  size_t i = 0;
#ifdef ASC_SSE2
  const __m128i dq = _mm_set1_epi8('"'), lf = _mm_set1_epi8('\n'), comma = _mm_set1_epi8(','),
                cr = _mm_set1_epi8('\r');
  __m128i q = _mm_setzero_si128(), o = _mm_setzero_si128();
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
    q = _mm_or_si128(q, _mm_cmpeq_epi8(v, dq));
    o = _mm_or_si128(o, _mm_or_si128(_mm_cmpeq_epi8(v, lf),
                                     _mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, cr))));
  }
  quote = _mm_movemask_epi8(q) != 0;
  special |= _mm_movemask_epi8(o) != 0;
#endif
  for (; i < n; i++) {
    quote |= s[i] == '"';
    special |= s[i] == '\n' || s[i] == ',' || s[i] == '\r';
  }
  return quote ? ASC_CSV_QUOTE : special ? ASC_CSV_QUOTE_NO_INNER : ASC_CSV_PLAIN;
}

int asc_csv_write_field(asc_csv_writer *w, const char *s, size_t n) {
  return asc_csv_write_field_q(w, s, n, asc_csv_quoting(s, n));
}

int asc_csv_write_field_q(asc_csv_writer *w, const char *s, size_t n, int quote) {
  if (w->row_started && putch(w, ',')) return -1;
  w->row_started = 1;
  if (quote == ASC_CSV_PLAIN) return put(w, s, n);
  if (putch(w, '"')) return -1;
  if (quote == ASC_CSV_QUOTE_NO_INNER) return put(w, s, n) || putch(w, '"') ? -1 : 0;
  /* write the runs between quotes whole; each quote is written twice */
  const char *p = s, *end = s + n;
  while (p < end) {
    const char *q = memchr(p, '"', (size_t)(end - p));
    size_t run = (size_t)((q ? q + 1 : end) - p);
    if (put(w, p, run)) return -1;
    if (q && putch(w, '"')) return -1;
    p += run;
  }
  return putch(w, '"');
}

int asc_csv_end_row(asc_csv_writer *w) {
  w->row_started = 0;
  return putch(w, '\n');
}

int asc_csv_writer_close(asc_csv_writer *w, asc_error *err) {
  if (w->spool) {
    asc_csv_writer_abort(w);
    return asc_fail(err, NULL, -1, 0, 0, "a spool is saved, not closed");
  }
  flush(w); /* a failure is kept in w->out and reported by the commit */
  int rc = asc_atomic_commit(&w->out, err);
  free(w->buf);
  free(w);
  return rc;
}

void asc_csv_writer_abort(asc_csv_writer *w) {
  if (w->spool)
    asc_spool_close(&w->out);
  else
    asc_atomic_abort(&w->out);
  free(w->buf);
  free(w);
}
