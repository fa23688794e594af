/* libcsv is push-based; this turns it into a pull reader by queueing the records one chunk
 * produces, then builds typed, header-mapped columns on top of that reader. */
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/csv.h"
#include "ascope/checked.h"
#include "ascope/decimal.h"
#include "ascope/simd.h"
#include "ascope/fs.h"

typedef struct {
  size_t off, len;
} span;

typedef struct {
  size_t first, n;
  long line;
} rec;

struct asc_csv_reader {
  FILE *f;
  char path[1024];
  struct csv_parser p;
  char *buf;
  size_t bufsz;
  long long done, size;
  int eof, started;
  /* queued records */
  char *arena;
  size_t arena_n, arena_cap;
  span *fields;
  size_t nfields, fields_cap;
  rec *recs;
  size_t nrecs, recs_cap, next;
  size_t row_first; /* first field of the record being built */
  long line, row_line;
  int row_open, oom;
  int wide; /* a record with more than ASC_CSV_MAX_FIELDS fields: an error, not gigabytes of spans */
  /* views handed out */
  const char **outp;
  size_t *outl;
  size_t out_cap;
};

static void on_field(void *data, size_t n, void *ud) {
  asc_csv_reader *r = ud;
  if (r->oom || r->wide) return;
  if (r->row_open && r->nfields - r->row_first >= ASC_CSV_MAX_FIELDS) {
    r->wide = 1;
    return;
  }
  if (!r->row_open) {
    r->row_open = 1;
    r->row_first = r->nfields;
    r->row_line = r->line;
  }
  if (r->arena_n + n + 1 > r->arena_cap) {
    size_t nc = r->arena_cap ? r->arena_cap : 1 << 16;
    while (r->arena_n + n + 1 > nc) nc *= 2;
    char *a = realloc(r->arena, nc);
    if (!a) {
      r->oom = 1;
      return;
    }
    r->arena = a;
    r->arena_cap = nc;
  }
  if (r->nfields == r->fields_cap) {
    size_t nc = r->fields_cap ? r->fields_cap * 2 : 256;
    span *s = asc_realloc_array(r->fields, nc, sizeof *s);
    if (!s) {
      r->oom = 1;
      return;
    }
    r->fields = s;
    r->fields_cap = nc;
  }
  if (n) memcpy(r->arena + r->arena_n, data, n);
  r->arena[r->arena_n + n] = '\0';
  r->fields[r->nfields++] = (span){r->arena_n, n};
  r->arena_n += n + 1;
  for (const char *q = data; n && (q = memchr(q, '\n', n - (size_t)(q - (const char *)data))); q++) r->line++;
}

static void on_row(int c, void *ud) {
  asc_csv_reader *r = ud;
  /* With CSV_REPALL_NL every CR and LF ends a row, so lines can be counted exactly; a row
   * without fields (an empty line or the LF of a CRLF) is not a record. */
  if (c == '\n') r->line++;
  if (!r->row_open || r->oom) return;
  if (r->nrecs == r->recs_cap) {
    size_t nc = r->recs_cap ? r->recs_cap * 2 : 64;
    rec *s = asc_realloc_array(r->recs, nc, sizeof *s);
    if (!s) {
      r->oom = 1;
      return;
    }
    r->recs = s;
    r->recs_cap = nc;
  }
  r->recs[r->nrecs++] = (rec){r->row_first, r->nfields - r->row_first, r->row_line};
  r->row_open = 0;
}

int asc_csv_open(const char *path, asc_csv_reader **out, asc_error *err) {
  *out = NULL;
  asc_csv_reader *r = calloc(1, sizeof *r);
  if (!r) return asc_fail(err, path, -1, 0, 0, "out of memory");
  snprintf(r->path, sizeof r->path, "%s", path);
  r->f = asc_open_input(path, err);
  if (!r->f) {
    free(r);
    return -1;
  }
  fseeko(r->f, 0, SEEK_END);
  r->size = ftello(r->f);
  fseeko(r->f, 0, SEEK_SET);
  r->bufsz = 1 << 18;
  r->buf = malloc(r->bufsz);
  if (!r->buf || csv_init(&r->p, CSV_STRICT | CSV_REPALL_NL | CSV_STRICT_FINI) != 0) {
    free(r->buf);
    fclose(r->f);
    free(r);
    return asc_fail(err, path, -1, 0, 0, "out of memory");
  }
  r->line = 1;
  *out = r;
  return 0;
}

static int parse_failed(asc_csv_reader *r, const char *chunk, size_t used, asc_error *err) {
  if (r->oom) return asc_fail(err, r->path, -1, 0, 0, "out of memory");
  if (r->wide)
    return asc_fail(err, r->path, -1, r->row_line, 0,
                    "a record has more than %d fields: not a table this reads", ASC_CSV_MAX_FIELDS);
  long line = 1;
  long long off = r->done + (long long)used;
  /* Count lines from the file start: errors are rare, so re-reading is fine. */
  FILE *f = fopen(r->path, "rb");
  if (f) {
    long long k = 0;
    int c;
    while (k < off && (c = getc(f)) != EOF) {
      if (c == '\n') line++;
      k++;
    }
    fclose(f);
  }
  (void)chunk;
  return asc_fail(err, r->path, off, line, 0, "malformed CSV: %s (a stray or unclosed quote?)",
                  csv_strerror(csv_error(&r->p)));
}

static int fill(asc_csv_reader *r, asc_error *err) {
  r->nrecs = r->next = 0;
  /* keep the fields of a record still being built */
  if (r->row_open && r->row_first > 0) {
    size_t base = r->fields[r->row_first].off, nf = r->nfields - r->row_first;
    memmove(r->arena, r->arena + base, r->arena_n - base);
    r->arena_n -= base;
    for (size_t i = 0; i < nf; i++) {
      r->fields[i] = r->fields[r->row_first + i];
      r->fields[i].off -= base;
    }
    r->nfields = nf;
    r->row_first = 0;
  } else if (!r->row_open) {
    r->arena_n = r->nfields = 0;
  }
  while (r->nrecs == 0 && !r->eof) {
    size_t n = fread(r->buf, 1, r->bufsz, r->f);
    const char *p = r->buf;
    if (!r->started) {
      r->started = 1;
      if (n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3, n -= 3, r->done += 3;
    }
    if (n == 0) {
      if (ferror(r->f)) return asc_fail(err, r->path, r->done, 0, 0, "read error");
      r->eof = 1;
      if (csv_fini(&r->p, on_field, on_row, r) != 0 || r->oom || r->wide)
        return parse_failed(r, NULL, 0, err);
      break;
    }
    size_t used = csv_parse(&r->p, p, n, on_field, on_row, r);
    if (used != n || r->oom || r->wide) return parse_failed(r, p, used, err);
    r->done += (long long)n;
  }
  return 0;
}

int asc_csv_next(asc_csv_reader *r, asc_csv_record *out, asc_error *err) {
  if (r->next >= r->nrecs) {
    if (r->eof) return 0;
    if (fill(r, err)) return -1;
    if (r->next >= r->nrecs) return 0;
  }
  const rec *rc = &r->recs[r->next++];
  if (rc->n > r->out_cap) {
    size_t nc = rc->n * 2;
    const char **p = asc_realloc_array(r->outp, nc, sizeof *p);
    if (!p) return asc_fail(err, r->path, -1, 0, 0, "out of memory");
    r->outp = p;
    size_t *l = asc_realloc_array(r->outl, nc, sizeof *l);
    if (!l) return asc_fail(err, r->path, -1, 0, 0, "out of memory");
    r->outl = l;
    r->out_cap = nc;
  }
  for (size_t i = 0; i < rc->n; i++) {
    r->outp[i] = r->arena + r->fields[rc->first + i].off;
    r->outl[i] = r->fields[rc->first + i].len;
  }
  out->nfields = rc->n;
  out->fields = r->outp;
  out->lens = r->outl;
  out->line = rc->line;
  return 1;
}

long long asc_csv_bytes_read(const asc_csv_reader *r) { return r->done; }
long long asc_csv_size(const asc_csv_reader *r) { return r->size; }

void asc_csv_close(asc_csv_reader *r) {
  if (!r) return;
  csv_free(&r->p);
  if (r->f) fclose(r->f);
  free(r->buf);
  free(r->arena);
  free(r->fields);
  free(r->recs);
  free(r->outp);
  free(r->outl);
  free(r);
}

/* ---------- typed columns ---------- */

void asc_csv_result_free(asc_csv_result *res, size_t ncols) {
  if (res->cols)
    for (size_t i = 0; i < ncols; i++) asc_col_free(&res->cols[i]);
  free(res->cols);
  free(res->present);
  res->cols = NULL;
  res->present = NULL;
  res->nrows = 0;
}

static int header_eq(const char *h, size_t n, const char *name) {
  n = asc_trim(&h, n);
  if (n >= 3 && memcmp(h, "\xEF\xBB\xBF", 3) == 0) h += 3, n -= 3;
  return strlen(name) == n && memcmp(h, name, n) == 0;
}

/* A cell that is not of its column's type (its first 80 bytes quoted). One template per type, so
 * that each reads whole in any language. */
static void bad_cell(asc_error *err, const char *path, long line, long col, const asc_csv_colspec *cs,
                     const char *v, size_t n) {
  int w = n > 80 ? 80 : (int)n;
  if (cs->type == ASC_CT_INTEGER)
    asc_fail(err, path, -1, line, col, "column \"%s\": \"%.*s\" is not a whole number", cs->name, w, v);
  else if (cs->type == ASC_CT_US)
    asc_fail(err, path, -1, line, col, "column \"%s\": \"%.*s\" is not a time", cs->name, w, v);
  else
    asc_fail(err, path, -1, line, col, "column \"%s\": \"%.*s\" is not a number", cs->name, w, v);
}

/* Typed reading has its own tokenizer: each record is parsed in place from the read buffer and
 * every field converted straight into its column (quoted fields with doubled quotes are the
 * only ones copied). A record cut by the end of the buffer is parsed again after a refill. */
typedef struct {
  const asc_csv_spec *spec;
  asc_csv_result *res;
  const char *path;
  int header_done;
  char **hnames; /* header fields */
  size_t nh, hcap;
  long *hmap; /* header index -> spec column or -1 */
  long line;
  int failed; /* 1 error set, 2 out of memory */
  asc_error *err;
} typed;

/* ragged: the row has another number of fields than the header, so which column a value belongs
 * to cannot be told: its numbers are read as missing (a duration one field off is another
 * column's value), its strings as they are. */
static void typed_field(typed *t, size_t f, const char *v, size_t n, long line, int ragged) {
  if (!t->header_done) {
    if (t->nh == t->hcap) {
      size_t nc = t->hcap ? t->hcap * 2 : 32;
      char **p = asc_realloc_array(t->hnames, nc, sizeof *p);
      if (!p) return (void)(t->failed = 2);
      t->hnames = p;
      t->hcap = nc;
    }
    char *copy = malloc(n + 1);
    if (!copy) return (void)(t->failed = 2);
    memcpy(copy, v, n);
    copy[n] = '\0';
    t->hnames[t->nh++] = copy;
    return;
  }
  if (f >= t->nh || t->hmap[f] < 0) return;
  size_t j = (size_t)t->hmap[f];
  const asc_csv_colspec *cs = &t->spec->cols[j];
  asc_col *c = &t->res->cols[j];
  n = asc_trim(&v, n);
  int bad = 0, oom;
  if (cs->type == ASC_CT_STRING) {
    uint32_t id;
    oom = asc_strtab_intern(t->spec->strings, v, n, &id) || asc_col_push_str(c, id);
  } else if (ragged || asc_is_na(v, n)) {
    oom = asc_col_push_null(c);
  } else if (cs->type == ASC_CT_NUMBER) {
    double d;
    bad = asc_decimal_f64(v, n, &d) != 0;
    oom = asc_col_push_f64(c, bad ? NAN : d);
  } else {
    int64_t x;
    bad = (cs->type == ASC_CT_US ? asc_decimal_scaled(v, n, 3, &x) : asc_decimal_i64(v, n, &x)) != 0;
    oom = asc_col_push_i64(c, bad ? ASC_NULL_I64 : x);
  }
  if (oom) return (void)(t->failed = 2);
  if (!bad) return;
  if (!t->spec->bad_as_null) {
    bad_cell(t->err, t->path, line, (long)f + 1, cs, v, n);
    t->failed = 1;
    return;
  }
  if (t->res->bad_cells++ == 0) bad_cell(&t->res->first_bad, t->path, line, 0, cs, v, n);
}

static void typed_row(typed *t, long line) {
  if (!t->header_done) {
    t->header_done = 1;
    t->res->header_fields = t->nh;
    t->hmap = asc_alloc_array(t->nh + 1, sizeof *t->hmap);
    if (!t->hmap) return (void)(t->failed = 2);
    for (size_t h = 0; h < t->nh; h++) t->hmap[h] = -1;
    for (size_t j = 0; j < t->spec->ncols; j++) {
      size_t first = 0;
      for (size_t h = 0; h < t->nh; h++) {
        if (!header_eq(t->hnames[h], strlen(t->hnames[h]), t->spec->cols[j].name)) continue;
        if (t->res->present[j]) { /* which of the two is meant cannot be told: not the first silently */
          asc_fail(t->err, t->path, -1, line, 0,
                   "column \"%s\" appears twice in the header (fields %zu and %zu)", t->spec->cols[j].name,
                   first + 1, h + 1);
          t->failed = 1;
          return;
        }
        if (t->hmap[h] < 0) {
          t->hmap[h] = (long)j;
          t->res->present[j] = 1;
          first = h;
        }
      }
      if (!t->res->present[j] && !t->spec->cols[j].optional) {
        asc_fail(t->err, t->path, -1, line, 0, "missing column \"%s\" in the header", t->spec->cols[j].name);
        t->failed = 1;
        return;
      }
    }
    return;
  }
  /* cells a short row did not have are missing values */
  for (size_t j = 0; j < t->spec->ncols; j++)
    if (t->res->cols[j].n == t->res->nrows && asc_col_push_null(&t->res->cols[j]))
      return (void)(t->failed = 2);
  t->res->nrows++;
}

enum { REC_OK = 0, REC_NEED = 1, REC_BAD = -1 };

/* Characters that end an unquoted field. */
static const unsigned char field_end[256] = {[','] = 1, ['\n'] = 1, ['\r'] = 1, ['"'] = 1};

/* The first byte in [p, e) that ends an unquoted field (e when none): sixteen bytes a step with
 * SSE2, a table lookup a byte for the rest (the same answer; a cell of a memory CSV is 3 to 21
 * bytes, so the steps take most of a row). */
static const char *field_stop(const char *p, const char *e) {
#ifdef ASC_SSE2
  const __m128i comma = _mm_set1_epi8(','), lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'),
                quote = _mm_set1_epi8('"');
  for (; e - p >= 16; p += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, lf)),
                             _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, quote)));
    unsigned bits = (unsigned)_mm_movemask_epi8(m);
    if (bits) return p + __builtin_ctz(bits);
  }
#endif
  while (p < e && !field_end[(unsigned char)*p]) p++;
  return p;
}

typedef struct {
  const char *v;
  size_t n;
  int doubled; /* holds "" pairs to undo */
} span_t;

typedef struct {
  span_t *sp;
  size_t n, cap; /* n: the record's fields; sp holds the first `stored` of them */
  size_t stored;
  char *scratch;
  size_t scap;
} fields_t;

/* One record from p (eof: the buffer holds the rest of the file). The fields are collected first
 * and converted only once the record is complete, so a record cut by the buffer's end leaves no
 * trace and is simply parsed again after the refill. */
static int record(typed *t, fields_t *fl, const char *p, const char *e, int eof, const char **out,
                  const char **bad_at) {
  long line = t->line, nl = 0;
  fl->n = fl->stored = 0;
  /* a data row's fields past the header's are never read: only counted, so a row of a million
   * commas costs no memory; a header is bounded by ASC_CSV_MAX_FIELDS */
  size_t keep = t->header_done ? t->nh : ASC_CSV_MAX_FIELDS;
  /* an empty line is no record */
  if (p < e && (*p == '\n' || *p == '\r')) {
    if (*p == '\r' && p + 1 >= e && !eof) return REC_NEED;
    if (*p == '\r' && p + 1 < e && p[1] == '\n') p++;
    t->line++;
    *out = p + 1;
    return REC_OK;
  }
  for (;;) {
    span_t sp = {p, 0, 0};
    if (p < e && *p == '"') {
      const char *q = p + 1;
      for (;;) {
        const char *quote = memchr(q, '"', (size_t)(e - q));
        if (!quote || quote + 1 >= e) {
          if (!eof) return REC_NEED;
          if (!quote) return *bad_at = p, REC_BAD; /* unclosed quote */
          q = quote;
          break;
        }
        if (quote[1] == '"') {
          sp.doubled = 1;
          q = quote + 2;
          continue;
        }
        q = quote;
        break;
      }
      sp.v = p + 1;
      sp.n = (size_t)(q - sp.v);
      for (const char *c = sp.v; (c = memchr(c, '\n', (size_t)(q - c))) != NULL; c++) nl++;
      p = q + 1;
      while (p < e && (*p == ' ' || *p == '\t')) p++;
      if (p < e && *p != ',' && *p != '\n' && *p != '\r') return *bad_at = p, REC_BAD;
    } else {
      p = field_stop(p, e);
      if (p < e && *p == '"') return *bad_at = p, REC_BAD; /* a quote inside an unquoted field */
      sp.n = (size_t)(p - sp.v);
    }
    if (p >= e && !eof) return REC_NEED;
    if (p < e && *p == '\r' && p + 1 >= e && !eof) return REC_NEED;
    if (fl->n >= keep) {
      if (!t->header_done) {
        asc_fail(t->err, t->path, -1, line, 0, "the header has more than %d fields: not a table this reads",
                 ASC_CSV_MAX_FIELDS);
        return t->failed = 1, REC_BAD;
      }
    } else if (fl->n == fl->cap) {
      size_t nc = fl->cap ? fl->cap * 2 : 64;
      span_t *ns = asc_realloc_array(fl->sp, nc, sizeof *ns);
      if (!ns) return t->failed = 2, REC_BAD;
      fl->sp = ns;
      fl->cap = nc;
    }
    if (fl->n < keep) fl->sp[fl->stored++] = sp;
    fl->n++;
    if (p >= e) { /* the end of the file without a line end */
      if (t->header_done) {
        t->res->cut_line = line;
        t->res->cut_fields = fl->n;
        if (fl->n < t->nh) { /* a row cut short: its last value may be cut too, so it is not used */
          *out = p;
          return REC_OK;
        }
      }
      break;
    }
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p == '\r' && p + 1 < e && p[1] == '\n') p++;
    p++;
    nl++;
    break;
  }
  int ragged = t->header_done && fl->n != t->nh;
  if (ragged && t->res->ragged_rows++ == 0)
    asc_fail(&t->res->first_ragged, t->path, -1, line, 0, "%zu fields where the header has %zu", fl->n,
             t->nh);
  for (size_t f = 0; f < fl->stored && !t->failed; f++) {
    span_t *sp = &fl->sp[f];
    const char *v = sp->v;
    size_t n = sp->n;
    if (sp->doubled) {
      if (n + 1 > fl->scap) {
        size_t nc = fl->scap ? fl->scap : 256;
        while (nc < n + 1) nc *= 2;
        char *np = realloc(fl->scratch, nc);
        if (!np) return t->failed = 2, REC_BAD;
        fl->scratch = np;
        fl->scap = nc;
      }
      size_t k = 0;
      for (size_t i = 0; i < n; i++) {
        fl->scratch[k++] = v[i];
        if (v[i] == '"') i++;
      }
      v = fl->scratch;
      n = k;
    }
    typed_field(t, f, v, n, line, ragged);
  }
  if (!t->failed) typed_row(t, line);
  t->line += nl;
  *out = p;
  return t->failed ? REC_BAD : REC_OK;
}

int asc_csv_read(const char *path, const asc_csv_spec *spec, asc_csv_result *res, asc_error *err) {
  memset(res, 0, sizeof *res);
  if (!spec->strings) return asc_fail(err, path, -1, 0, 0, "no string table given");
  FILE *f = asc_open_input(path, err);
  if (!f) return -1;
  fseeko(f, 0, SEEK_END);
  long long total = ftello(f);
  fseeko(f, 0, SEEK_SET);
  size_t nc = spec->ncols;
  typed t;
  memset(&t, 0, sizeof t);
  t.spec = spec;
  t.res = res;
  t.path = path;
  t.line = 1;
  t.err = err;
  int rc = 0;
  size_t cap = 1 << 20, start = 0, end = 0;
  long long base = 0, next_report = 64LL << 20;
  char *buf = malloc(cap);
  fields_t fl = {0};
  int eof = 0, first = 1;
  res->cols = calloc(nc + 1, sizeof *res->cols);
  res->present = calloc(nc + 1, sizeof *res->present);
  if (!buf || !res->cols || !res->present) {
    rc = asc_fail(err, path, -1, 0, 0, "out of memory");
    goto done;
  }
  for (size_t j = 0; j < nc; j++)
    asc_col_init(&res->cols[j], spec->cols[j].type == ASC_CT_STRING   ? ASC_STR
                                : spec->cols[j].type == ASC_CT_NUMBER ? ASC_F64
                                                                      : ASC_I64);
  for (;;) {
    if (start < end) {
      const char *out, *bad_at = NULL;
      int r = record(&t, &fl, buf + start, buf + end, eof, &out, &bad_at);
      if (r == REC_OK) {
        start = (size_t)(out - buf);
        continue;
      }
      if (r == REC_BAD) {
        if (t.failed == 2)
          rc = asc_fail(err, path, -1, t.line, 0, "out of memory");
        else if (t.failed)
          rc = -1;
        else
          rc = asc_fail(err, path, base + (bad_at - buf), t.line, 0,
                        "malformed CSV: a stray or unclosed quote");
        goto done;
      }
    }
    if (eof) break;
    /* refill: keep the unfinished record, grow for a record larger than the buffer */
    if (start > 0) {
      memmove(buf, buf + start, end - start);
      base += (long long)start;
      end -= start;
      start = 0;
    }
    if (end == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        rc = asc_fail(err, path, base, t.line, 0, "out of memory");
        goto done;
      }
      buf = nb;
      cap *= 2;
    }
    size_t n = fread(buf + end, 1, cap - end, f);
    if (n == 0) {
      if (ferror(f)) {
        rc = asc_fail(err, path, base + (long long)end, 0, 0, "read error: %s", strerror(errno));
        goto done;
      }
      eof = 1;
    }
    if (first && end + n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) start = 3;
    first = 0;
    end += n;
    if (spec->progress && base + (long long)end >= next_report) {
      next_report = base + (long long)end + (64LL << 20);
      if (spec->progress(spec->progress_ud, base + (long long)end, total)) {
        rc = asc_fail(err, path, base, 0, 0, "interrupted");
        goto done;
      }
    }
  }
  if (!t.header_done) rc = asc_fail(err, path, 0, 1, 0, "the file is empty (no header line)");
  if (rc == 0 && spec->progress) spec->progress(spec->progress_ud, total, total);
done:
  fclose(f);
  free(buf);
  free(fl.sp);
  free(fl.scratch);
  for (size_t h = 0; h < t.nh; h++) free(t.hnames[h]);
  free(t.hnames);
  free(t.hmap);
  if (rc) asc_csv_result_free(res, nc);
  return rc;
}
