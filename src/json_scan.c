/* yajl callbacks that keep only what the spec asks for. Values of the keys a spec mentions are
 * copied into a per-event scratch buffer; at the event's closing brace the predicates run and
 * matching events are pushed into columns. Everything else is parsed and dropped, so memory is
 * bounded by the scratch buffer plus the retained rows. */
#include "ascope/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "ascope/decimal.h"

enum { V_NONE = 0, V_STR, V_NUM, V_BOOL, V_NULL, V_CONTAINER };

typedef struct slot {
  const char *name;
  size_t len;
  int in_args;
  /* per event */
  int vtype;
  size_t off, vlen;
} slot;

typedef struct scan {
  const asc_json_spec *spec;
  asc_json_result *res;
  slot *slots;
  size_t nslots;
  int *field_slot, *pred_slot;
  int ph_slot, name_slot, pid_slot, tid_slot, argname_slot;
  /* parse position */
  int depth, event_depth, args_depth, root_is_map, want_events_array, events_done;
  int cur; /* slot expecting the next value, -1 none */
  int in_event;
  char *scratch;
  size_t scratch_n, scratch_cap;
  int oom;
  char bad[256]; /* a value that could not be converted */
} scan;

static int find_slot(scan *s, const char *name, int in_args) {
  for (size_t i = 0; i < s->nslots; i++)
    if (s->slots[i].in_args == in_args && strcmp(s->slots[i].name, name) == 0) return (int)i;
  return -1;
}

static int add_slot(scan *s, const char *name, int in_args) {
  int i = find_slot(s, name, in_args);
  if (i >= 0) return i;
  s->slots[s->nslots] = (slot){name, strlen(name), in_args, 0, 0, 0};
  return (int)s->nslots++;
}

static int store(scan *s, int vtype, const unsigned char *v, size_t n) {
  if (s->cur == (int)s->nslots) return s->cur = -1, 1; /* "args" that is not an object */
  slot *sl = &s->slots[s->cur];
  s->cur = -1;
  if (s->scratch_n + n > s->scratch_cap) {
    size_t nc = s->scratch_cap ? s->scratch_cap : 4096;
    while (s->scratch_n + n > nc) nc *= 2;
    char *p = realloc(s->scratch, nc);
    if (!p) return s->oom = 1, 0;
    s->scratch = p;
    s->scratch_cap = nc;
  }
  memcpy(s->scratch + s->scratch_n, v, n);
  sl->vtype = vtype;
  sl->off = s->scratch_n;
  sl->vlen = n;
  s->scratch_n += n;
  return 1;
}

static int on_null(void *ud) {
  scan *s = ud;
  return s->cur < 0 ? 1 : store(s, V_NULL, (const unsigned char *)"null", 4);
}
static int on_bool(void *ud, int b) {
  scan *s = ud;
  if (s->cur < 0) return 1;
  return b ? store(s, V_BOOL, (const unsigned char *)"true", 4)
           : store(s, V_BOOL, (const unsigned char *)"false", 5);
}
static int on_number(void *ud, const char *v, size_t n) {
  scan *s = ud;
  return s->cur < 0 ? 1 : store(s, V_NUM, (const unsigned char *)v, n);
}
static int on_string(void *ud, const unsigned char *v, size_t n) {
  scan *s = ud;
  return s->cur < 0 ? 1 : store(s, V_STR, v, n);
}

static int on_start_map(void *ud) {
  scan *s = ud;
  s->depth++;
  if (s->depth == 1) {
    s->root_is_map = 1;
  } else if (s->depth == s->event_depth && !s->events_done) {
    s->in_event = 1;
    s->scratch_n = 0;
    for (size_t i = 0; i < s->nslots; i++) s->slots[i].vtype = V_NONE;
  } else if (s->cur >= 0) {
    /* "args" itself, or a slot whose value is an object: remember that it exists */
    int is_args = s->in_event && s->depth == s->event_depth + 1 && s->cur == (int)s->nslots;
    if (is_args) {
      s->args_depth = s->depth;
    } else {
      s->slots[s->cur].vtype = V_CONTAINER;
      s->slots[s->cur].vlen = 0;
    }
  }
  s->cur = -1;
  return 1;
}

static int on_start_array(void *ud) {
  scan *s = ud;
  s->depth++;
  if (s->depth == 1) {
    s->event_depth = 2;
  } else if (s->depth == 2 && s->want_events_array) {
    s->event_depth = 3;
  } else if (s->cur >= 0 && s->cur < (int)s->nslots) {
    s->slots[s->cur].vtype = V_CONTAINER;
    s->slots[s->cur].vlen = 0;
  }
  s->want_events_array = 0;
  s->cur = -1;
  return 1;
}

static int on_end_array(void *ud) {
  scan *s = ud;
  if (s->depth == s->event_depth - 1) s->events_done = 1;
  s->depth--;
  return 1;
}

static int on_key(void *ud, const unsigned char *k, size_t n) {
  scan *s = ud;
  s->cur = -1;
  if (s->depth == 1 && s->root_is_map) {
    s->want_events_array = n == 11 && memcmp(k, "traceEvents", 11) == 0;
    return 1;
  }
  if (!s->in_event) return 1;
  int in_args;
  if (s->depth == s->event_depth) {
    in_args = 0;
    if (n == 4 && memcmp(k, "args", 4) == 0) {
      s->cur = (int)s->nslots; /* marker: the next map is args */
      return 1;
    }
  } else if (s->depth == s->args_depth) {
    in_args = 1;
  } else {
    return 1;
  }
  for (size_t i = 0; i < s->nslots; i++) {
    const slot *sl = &s->slots[i];
    if (sl->in_args == in_args && sl->len == n && memcmp(sl->name, k, n) == 0) {
      s->cur = (int)i;
      break;
    }
  }
  return 1;
}

static int text_eq(const scan *s, const slot *sl, const char *v) {
  size_t n = strlen(v);
  return sl->vtype != V_NONE && sl->vtype != V_CONTAINER && sl->vlen == n &&
         memcmp(s->scratch + sl->off, v, n) == 0;
}

static int intern(scan *s, const slot *sl, uint32_t *id) {
  if (sl->vtype == V_NONE || sl->vtype == V_NULL || sl->vtype == V_CONTAINER) return *id = 0, 0;
  if (asc_strtab_intern(s->spec->strings, s->scratch + sl->off, sl->vlen, id)) return s->oom = 1;
  return 0;
}

static int push_field(scan *s, const asc_jfield *f, const slot *sl, asc_col *c) {
  const char *v = s->scratch + sl->off;
  int has = sl->vtype == V_STR || sl->vtype == V_NUM || sl->vtype == V_BOOL;
  int r = 0;
  switch (f->type) {
  case ASC_JT_STRING: {
    uint32_t id;
    if (intern(s, sl, &id)) return -1;
    r = asc_col_push_str(c, id);
    break;
  }
  case ASC_JT_INT:
  case ASC_JT_US: {
    int64_t x;
    int scale = f->type == ASC_JT_US ? 3 : 0;
    if (has && sl->vtype != V_BOOL && !(sl->vtype == V_STR && asc_is_na(v, sl->vlen))) {
      if ((scale ? asc_decimal_scaled(v, sl->vlen, scale, &x) : asc_decimal_i64(v, sl->vlen, &x))) {
        if (!s->bad[0])
          snprintf(s->bad, sizeof s->bad, "field \"%s\": \"%.*s\" is not a %s", f->name,
                   (int)(sl->vlen > 64 ? 64 : sl->vlen), v, scale ? "time" : "whole number");
        x = ASC_NULL_I64;
      }
    } else {
      x = ASC_NULL_I64;
    }
    r = asc_col_push_i64(c, x);
    break;
  }
  case ASC_JT_NUM: {
    double d = NAN;
    if (has && sl->vtype != V_BOOL && asc_decimal_f64(v, sl->vlen, &d)) d = NAN;
    r = asc_col_push_f64(c, d);
    break;
  }
  }
  if (r) s->oom = 1;
  return r;
}

static int pred_holds(const scan *s, const asc_jpred *p, const slot *sl) {
  switch (p->op) {
  case ASC_PRED_EXISTS: return sl->vtype != V_NONE && sl->vtype != V_NULL;
  case ASC_PRED_ABSENT: return sl->vtype == V_NONE || sl->vtype == V_NULL;
  case ASC_PRED_EQ: return p->nvalues > 0 && text_eq(s, sl, p->values[0]);
  case ASC_PRED_IN:
    for (size_t i = 0; i < p->nvalues; i++)
      if (text_eq(s, sl, p->values[i])) return 1;
    return 0;
  }
  return 0;
}

static int end_event(scan *s) {
  asc_json_result *r = s->res;
  r->events++;
  if (s->spec->want_meta && text_eq(s, &s->slots[s->ph_slot], "M")) {
    uint32_t what, pid, tid, name;
    if (intern(s, &s->slots[s->name_slot], &what) || intern(s, &s->slots[s->pid_slot], &pid) ||
        intern(s, &s->slots[s->tid_slot], &tid) || intern(s, &s->slots[s->argname_slot], &name))
      return 0;
    if (name && (asc_col_push_str(&r->meta_what, what) || asc_col_push_str(&r->meta_pid, pid) ||
                 asc_col_push_str(&r->meta_tid, tid) || asc_col_push_str(&r->meta_name, name)))
      return s->oom = 1, 0;
  }
  for (size_t i = 0; i < s->spec->npreds; i++)
    if (!pred_holds(s, &s->spec->preds[i], &s->slots[s->pred_slot[i]])) return 1;
  for (size_t i = 0; i < s->spec->nfields; i++)
    if (push_field(s, &s->spec->fields[i], &s->slots[s->field_slot[i]], &r->cols[i])) return 0;
  r->nrows++;
  return 1;
}

static int on_end_map(void *ud) {
  scan *s = ud;
  int ok = 1;
  if (s->in_event && s->depth == s->event_depth) {
    ok = end_event(s);
    s->in_event = 0;
  } else if (s->depth == s->args_depth) {
    s->args_depth = 0;
  }
  s->depth--;
  s->cur = -1;
  return ok;
}

static const yajl_callbacks callbacks = {
    on_null, on_bool, NULL, NULL, on_number, on_string,
    on_start_map, on_key, on_end_map, on_start_array, on_end_array};

void asc_json_result_free(asc_json_result *res, size_t nfields) {
  if (res->cols)
    for (size_t i = 0; i < nfields; i++) asc_col_free(&res->cols[i]);
  free(res->cols);
  res->cols = NULL;
  asc_col_free(&res->meta_what);
  asc_col_free(&res->meta_pid);
  asc_col_free(&res->meta_tid);
  asc_col_free(&res->meta_name);
  res->nrows = 0;
}

/* Line and column of absolute byte offset `at`, counting from what the scan has passed. */
typedef struct {
  long line;
  long long line_start;
} linepos;

static void count_lines(linepos *lp, const char *buf, size_t n, long long base) {
  for (const char *p = buf; (p = memchr(p, '\n', (size_t)(buf + n - p))) != NULL; p++) {
    lp->line++;
    lp->line_start = base + (p - buf) + 1;
  }
}

static int parse_error(yajl_handle h, const char *path, const char *buf, size_t n, long long base,
                       linepos lp, int at_end, asc_error *err) {
  size_t used = at_end ? 0 : yajl_get_bytes_consumed(h);
  if (!at_end && used > n) used = n;
  count_lines(&lp, buf, used, base);
  long long off = base + (long long)used;
  unsigned char *m = yajl_get_error(h, 0, (const unsigned char *)buf, n);
  char msg[256];
  snprintf(msg, sizeof msg, "%s", m ? (const char *)m : "parse error");
  if (m) yajl_free_error(h, m);
  for (char *q = msg; *q; q++)
    if (*q == '\n') *q = ' ';
  size_t ml = strlen(msg);
  while (ml && msg[ml - 1] == ' ') msg[--ml] = '\0';
  return asc_fail(err, path, off, lp.line, (long)(off - lp.line_start) + 1, "invalid JSON%s: %s",
                  at_end ? " (the file ends early: truncated?)" : "", msg);
}

int asc_json_scan(const char *path, const asc_json_spec *spec, asc_json_result *res,
                  asc_error *err) {
  memset(res, 0, sizeof *res);
  asc_col_init(&res->meta_what, ASC_STR);
  asc_col_init(&res->meta_pid, ASC_STR);
  asc_col_init(&res->meta_tid, ASC_STR);
  asc_col_init(&res->meta_name, ASC_STR);
  if (!spec->strings) return asc_fail(err, path, -1, 0, 0, "no string table given");
  FILE *f = fopen(path, "rb");
  if (!f) return asc_fail(err, path, -1, 0, 0, "cannot open: %s", strerror(errno));
  fseeko(f, 0, SEEK_END);
  long long total = ftello(f);
  fseeko(f, 0, SEEK_SET);

  scan s;
  memset(&s, 0, sizeof s);
  s.spec = spec;
  s.res = res;
  s.cur = -1;
  size_t maxslots = spec->nfields + spec->npreds + 5;
  s.slots = calloc(maxslots + 1, sizeof *s.slots);
  s.field_slot = calloc(spec->nfields + 1, sizeof(int));
  s.pred_slot = calloc(spec->npreds + 1, sizeof(int));
  res->cols = calloc(spec->nfields + 1, sizeof *res->cols);
  size_t chunk = spec->chunk ? spec->chunk : (size_t)1 << 20;
  char *buf = malloc(chunk);
  yajl_handle h = yajl_alloc(&callbacks, NULL, &s);
  int rc = 0;
  linepos lp = {1, 0};
  long long base = 0, next_report = 64LL << 20;
  if (!s.slots || !s.field_slot || !s.pred_slot || !res->cols || !buf || !h) {
    rc = asc_fail(err, path, -1, 0, 0, "out of memory");
    goto done;
  }
  yajl_config(h, yajl_dont_validate_strings, 1);
  for (size_t i = 0; i < spec->nfields; i++) {
    s.field_slot[i] = add_slot(&s, spec->fields[i].name, spec->fields[i].in_args);
    asc_kind k = spec->fields[i].type == ASC_JT_STRING ? ASC_STR
                 : spec->fields[i].type == ASC_JT_NUM  ? ASC_F64
                                                       : ASC_I64;
    asc_col_init(&res->cols[i], k);
  }
  for (size_t i = 0; i < spec->npreds; i++)
    s.pred_slot[i] = add_slot(&s, spec->preds[i].name, spec->preds[i].in_args);
  s.ph_slot = add_slot(&s, "ph", 0);
  s.name_slot = add_slot(&s, "name", 0);
  s.pid_slot = add_slot(&s, "pid", 0);
  s.tid_slot = add_slot(&s, "tid", 0);
  s.argname_slot = add_slot(&s, "name", 1);

  size_t n;
  while ((n = fread(buf, 1, chunk, f)) > 0) {
    yajl_status st = yajl_parse(h, (const unsigned char *)buf, n);
    if (st != yajl_status_ok) {
      if (s.oom) rc = asc_fail(err, path, base, 0, 0, "out of memory");
      else rc = parse_error(h, path, buf, n, base, lp, 0, err);
      goto done;
    }
    count_lines(&lp, buf, n, base);
    base += (long long)n;
    if (spec->progress && base >= next_report) {
      next_report = base + (64LL << 20);
      if (spec->progress(spec->progress_ud, base, total)) {
        rc = asc_fail(err, path, base, 0, 0, "interrupted");
        goto done;
      }
    }
  }
  if (ferror(f)) {
    rc = asc_fail(err, path, base, 0, 0, "read error: %s", strerror(errno));
    goto done;
  }
  if (base == 0) {
    rc = asc_fail(err, path, 0, 1, 1, "the file is empty");
    goto done;
  }
  if (yajl_complete_parse(h) != yajl_status_ok) {
    rc = parse_error(h, path, buf, 0, base, lp, 1, err);
    goto done;
  }
  if (s.event_depth == 0) {
    rc = asc_fail(err, path, 0, 1, 1,
                  "no event array: expected a JSON array or an object with \"traceEvents\"");
    goto done;
  }
  /* A value that could not be converted became null; the caller decides whether to warn. */
  snprintf(res->warning, sizeof res->warning, "%s", s.bad);
done:
  res->bytes = base;
  if (spec->progress && rc == 0) spec->progress(spec->progress_ud, base, total);
  if (rc && !spec->partial) asc_json_result_free(res, spec->nfields);
  if (h) yajl_free(h);
  free(buf);
  free(s.scratch);
  free(s.slots);
  free(s.field_slot);
  free(s.pred_slot);
  fclose(f);
  return rc;
}
