/* libcsv is push-based; this turns it into a pull reader by queueing the records one chunk
 * produces, then builds typed, header-mapped columns on top of that reader. */
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/csv.h"
#include "ascope/decimal.h"

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
  /* views handed out */
  const char **outp;
  size_t *outl;
  size_t out_cap;
};

static void on_field(void *data, size_t n, void *ud) {
  asc_csv_reader *r = ud;
  if (r->oom) return;
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
    span *s = realloc(r->fields, nc * sizeof *s);
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
  for (const char *q = data; n && (q = memchr(q, '\n', n - (size_t)(q - (const char *)data)));
       q++)
    r->line++;
}

static void on_row(int c, void *ud) {
  asc_csv_reader *r = ud;
  /* With CSV_REPALL_NL every CR and LF ends a row, so lines can be counted exactly; a row
   * without fields (an empty line or the LF of a CRLF) is not a record. */
  if (c == '\n') r->line++;
  if (!r->row_open || r->oom) return;
  if (r->nrecs == r->recs_cap) {
    size_t nc = r->recs_cap ? r->recs_cap * 2 : 64;
    rec *s = realloc(r->recs, nc * sizeof *s);
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
  r->f = fopen(path, "rb");
  if (!r->f) {
    int e = errno;
    free(r);
    return asc_fail(err, path, -1, 0, 0, "cannot open: %s", strerror(e));
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
      if (csv_fini(&r->p, on_field, on_row, r) != 0) return parse_failed(r, NULL, 0, err);
      break;
    }
    size_t used = csv_parse(&r->p, p, n, on_field, on_row, r);
    if (used != n || r->oom) return parse_failed(r, p, used, err);
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
    const char **p = realloc(r->outp, nc * sizeof *p);
    if (!p) return asc_fail(err, r->path, -1, 0, 0, "out of memory");
    r->outp = p;
    size_t *l = realloc(r->outl, nc * sizeof *l);
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

static const char *type_word(asc_ctype t) {
  return t == ASC_CT_INTEGER ? "a whole number" : t == ASC_CT_US ? "a time" : "a number";
}

int asc_csv_read(const char *path, const asc_csv_spec *spec, asc_csv_result *res,
                 asc_error *err) {
  memset(res, 0, sizeof *res);
  if (!spec->strings) return asc_fail(err, path, -1, 0, 0, "no string table given");
  asc_csv_reader *r;
  if (asc_csv_open(path, &r, err)) return -1;
  int rc = 0;
  size_t nc = spec->ncols;
  long *map = calloc(nc + 1, sizeof *map);
  res->cols = calloc(nc + 1, sizeof *res->cols);
  res->present = calloc(nc + 1, sizeof *res->present);
  if (!map || !res->cols || !res->present) {
    rc = asc_fail(err, path, -1, 0, 0, "out of memory");
    goto done;
  }
  for (size_t j = 0; j < nc; j++)
    asc_col_init(&res->cols[j], spec->cols[j].type == ASC_CT_STRING   ? ASC_STR
                                : spec->cols[j].type == ASC_CT_NUMBER ? ASC_F64
                                                                      : ASC_I64);
  asc_csv_record hdr;
  int got = asc_csv_next(r, &hdr, err);
  if (got < 0) {
    rc = -1;
    goto done;
  }
  if (got == 0) {
    rc = asc_fail(err, path, 0, 1, 0, "the file is empty (no header line)");
    goto done;
  }
  for (size_t j = 0; j < nc; j++) {
    map[j] = -1;
    for (size_t h = 0; h < hdr.nfields; h++)
      if (header_eq(hdr.fields[h], hdr.lens[h], spec->cols[j].name)) {
        map[j] = (long)h;
        break;
      }
    res->present[j] = map[j] >= 0;
    if (map[j] < 0 && !spec->cols[j].optional) {
      rc = asc_fail(err, path, -1, hdr.line, 0, "missing column \"%s\" in the header",
                    spec->cols[j].name);
      goto done;
    }
  }
  asc_csv_record rec;
  long long next_report = 64LL << 20;
  while ((got = asc_csv_next(r, &rec, err)) == 1) {
    for (size_t j = 0; j < nc; j++) {
      asc_col *c = &res->cols[j];
      const char *v = "";
      size_t n = 0;
      if (map[j] >= 0 && (size_t)map[j] < rec.nfields) {
        v = rec.fields[map[j]];
        n = asc_trim(&v, rec.lens[map[j]]);
      }
      int bad = 0, oom = 0;
      if (spec->cols[j].type == ASC_CT_STRING) {
        uint32_t id = 0;
        if (map[j] >= 0 && (size_t)map[j] < rec.nfields)
          oom = asc_strtab_intern(spec->strings, v, n, &id);
        oom = oom || asc_col_push_str(c, id);
      } else if (asc_is_na(v, n)) {
        oom = asc_col_push_null(c);
      } else if (spec->cols[j].type == ASC_CT_NUMBER) {
        double d;
        bad = asc_decimal_f64(v, n, &d) != 0;
        oom = asc_col_push_f64(c, bad ? NAN : d);
      } else {
        int64_t x;
        bad = (spec->cols[j].type == ASC_CT_US ? asc_decimal_scaled(v, n, 3, &x)
                                               : asc_decimal_i64(v, n, &x)) != 0;
        oom = asc_col_push_i64(c, bad ? ASC_NULL_I64 : x);
      }
      if (oom) {
        rc = asc_fail(err, path, -1, rec.line, 0, "out of memory");
        goto done;
      }
      if (bad) {
        if (!spec->bad_as_null) {
          rc = asc_fail(err, path, -1, rec.line, map[j] + 1,
                        "column \"%s\": \"%.*s\" is not %s", spec->cols[j].name,
                        (int)(n > 80 ? 80 : n), v, type_word(spec->cols[j].type));
          goto done;
        }
        if (res->bad_cells++ == 0)
          snprintf(res->first_bad, sizeof res->first_bad,
                   "%s:%ld: column \"%s\": \"%.*s\" is not %s", path, rec.line,
                   spec->cols[j].name, (int)(n > 80 ? 80 : n), v, type_word(spec->cols[j].type));
      }
    }
    res->nrows++;
    if (spec->progress && asc_csv_bytes_read(r) >= next_report) {
      next_report = asc_csv_bytes_read(r) + (64LL << 20);
      if (spec->progress(spec->progress_ud, asc_csv_bytes_read(r), asc_csv_size(r))) {
        rc = asc_fail(err, path, -1, rec.line, 0, "interrupted");
        goto done;
      }
    }
  }
  if (got < 0) rc = -1;
done:
  if (rc == 0 && spec->progress)
    spec->progress(spec->progress_ud, asc_csv_bytes_read(r), asc_csv_size(r));
  asc_csv_close(r);
  free(map);
  if (rc) asc_csv_result_free(res, nc);
  return rc;
}
