/* The parallel scan of one JSON trace: ranges cut at guessed event boundaries, one thread each,
 * each guess proved by the range before it (see json_par.h), columns joined in order.
 *
 * String ids: the first range interns into the caller's table as the single-threaded scan
 * does; every later range interns into a table of its own, in the order the single-threaded
 * scan would meet the same strings within that range. Interning each range's strings into the
 * caller's table in that order, range after range, hands out the very ids the single-threaded
 * scan does, so the joined columns only need each range's ids mapped. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/checked.h"
#include "ascope/fs.h"
#include "ascope/json_par.h"

/* A guessed start is looked for this far from its share's even cut; a share whose window holds
 * no "}," "{" (one huge event) is not cut there. */
#define GUESS_WINDOW ((size_t)1 << 20)
#define DEFAULT_MIN_RANGE (8LL << 20)
#define MAX_RANGES 64

typedef struct worker {
  const char *path;
  const asc_json_spec *spec;
  asc_json_range rg;
  asc_json_result res;
  asc_error err;
  int rc, ran;
} worker;

static void *run(void *ud) {
  worker *w = ud;
  w->rc = asc_json_scan_range(w->path, w->spec, &w->rg, &w->res, &w->err);
  w->ran = 1;
  return NULL;
}

static int is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\v'; }

/* The first byte of the document ('[' or '{'), past a byte order mark and white space; 0 when
 * it is something else or not within the first 4 KiB (the one-thread scan says what is wrong). */
static char root_char(FILE *f, long long *at) {
  char head[4096];
  if (fseeko(f, 0, SEEK_SET) != 0) return 0;
  size_t n = fread(head, 1, sizeof head, f), i = 0;
  if (n >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0) i = 3;
  while (i < n && is_ws(head[i])) i++;
  if (i >= n || (head[i] != '[' && head[i] != '{')) return 0;
  *at = (long long)i;
  return head[i];
}

/* A likely event start in [from, limit): the '{' of the first "," "{" at the lowest bracket
 * depth where a structural skim of the window meets one. The skim starts after the window's first raw
 * newline, which no JSON string holds, so it does not take a string's content for structure;
 * the lowest such depth of a window that holds the end of an event is the event array's. Still a
 * guess (a file without newlines, one event larger than the window): -1 when there is none. */
static long long guess_start(FILE *f, char *win, long long from, long long limit) {
  if (limit - from < 3 || fseeko(f, from, SEEK_SET) != 0) return -1;
  size_t want = (size_t)(limit - from) < GUESS_WINDOW ? (size_t)(limit - from) : GUESS_WINDOW;
  size_t n = fread(win, 1, want, f);
  const char *e = win + n, *p = memchr(win, '\n', n), *best = NULL;
  p = p ? p + 1 : win;
  long depth = 0, best_depth = 0;
  int comma = 0;
  while (p < e) {
    char c = *p++;
    if (c == '"') {
      while (p < e && *p != '"') p += *p == '\\' ? 2 : 1;
      p++;
      comma = 0;
      continue;
    }
    if (c == '{' || c == '[') {
      if (c == '{' && comma && (!best || depth < best_depth)) best = p - 1, best_depth = depth;
      depth++;
    } else if (c == '}' || c == ']') {
      depth--;
    }
    comma = c == ',' || (comma && is_ws(c));
  }
  return best ? from + (long long)(best - win) : -1;
}

/* b's rows after a's, string ids mapped through map (NULL: as they are); b is freed once its
 * rows are in a, so the join never holds a range's columns twice over: the peak is the joined
 * columns and one range's column, not the joined columns and every range's. */
static int append(asc_col *a, asc_col *b, const uint32_t *map) {
  size_t n;
  if (!b->n) return 0;
  if (asc_size_add(a->n, b->n, &n) || asc_col_reserve(a, n)) return -1;
  if (a->kind == ASC_STR && map)
    for (size_t i = 0; i < b->n; i++) a->v.s[a->n + i] = map[b->v.s[i]];
  else
    memcpy((char *)a->v.p + a->n * asc_kind_size(a->kind), b->v.p, b->n * asc_kind_size(a->kind));
  a->n = n;
  asc_col_free(b);
  return 0;
}

/* Range w joined after res. */
static int join(const asc_json_spec *spec, asc_json_result *res, worker *w) {
  /* w's strings into the caller's table, in the order w met them (local id -> id), the range's
   * table emptied on the way, so its text and the caller's copy are not both held in full */
  uint32_t *map = asc_strtab_drain_map(spec->strings, w->rg.strings);
  if (!map) return -1;
  int rc = 0;
  for (size_t i = 0; i < spec->nfields && !rc; i++) rc = append(&res->cols[i], &w->res.cols[i], map);
  if (!rc)
    rc = append(&res->meta_what, &w->res.meta_what, map) || append(&res->meta_pid, &w->res.meta_pid, map) ||
         append(&res->meta_tid, &w->res.meta_tid, map) || append(&res->meta_name, &w->res.meta_name, map);
  asc_strtab_free(w->rg.strings); /* its entries: the text went with the drain */
  w->rg.strings = NULL;
  res->nrows += w->res.nrows;
  res->events += w->res.events;
  res->ranges++;
  if (!res->warning[0]) snprintf(res->warning, sizeof res->warning, "%s", w->res.warning);
  free(map);
  return rc ? -1 : 0;
}

/* The starts of ranges 1..n-1 into next[1..]; how many ranges there are (1: no cut). */
static size_t plan(FILE *f, const asc_json_spec *spec, long long total, long long root, long long *next) {
  if (spec->nsplit_at) {
    if (spec->nsplit_at >= MAX_RANGES) return 1;
    for (size_t k = 0; k < spec->nsplit_at; k++) {
      long long s = spec->split_at[k];
      if (s <= root || (k && s <= spec->split_at[k - 1])) return 1; /* starts ascending, inside */
      next[k + 1] = s;
    }
    return spec->nsplit_at + 1;
  }
  long long min_range = spec->min_range > 0 ? spec->min_range : DEFAULT_MIN_RANGE;
  long long want = spec->threads < MAX_RANGES ? spec->threads : MAX_RANGES;
  if (total / min_range < want) want = total / min_range;
  if (want < 2) return 1;
  char *win = malloc(GUESS_WINDOW);
  if (!win) return 1;
  size_t n = 1;
  for (long long k = 1; k < want; k++) {
    long long cut = total / want * k, s = guess_start(f, win, cut, total / want * (k + 1));
    if (s > root && s > next[n - 1]) next[n++] = s;
  }
  free(win);
  return n;
}

int asc_json_scan_parallel(const char *path, const asc_json_spec *spec, asc_json_result *res,
                           asc_error *err) {
  if (!spec->strings) return 1;
  FILE *f = asc_open_input(path, err);
  if (!f) return 1;
  long long root = 0, total = -1;
  char rc0 = root_char(f, &root);
  if (fseeko(f, 0, SEEK_END) == 0) total = ftello(f);
  long long next[MAX_RANGES] = {0};
  size_t n = rc0 && total > 0 ? plan(f, spec, total, root, next) : 1;
  fclose(f);
  if (n < 2) return 1;

  worker *w = calloc(n, sizeof *w);
  atomic_int *dropped = calloc(n, sizeof *dropped), *proved = calloc(n, sizeof *proved);
  atomic_llong *done = calloc(n, sizeof *done);
  pthread_t *th = calloc(n, sizeof *th);
  int *started = calloc(n, sizeof *started);
  atomic_int stop;
  atomic_init(&stop, 0);
  int rc = 1;
  memset(res, 0, sizeof *res);
  /* the ranges share the caller's memory for text while they are read side by side (each a
   * table of its own would hold the whole of it: n times the text at the scan's end); the
   * caller's table gets all of it back for the join */
  size_t memory = asc_strtab_memory(spec->strings);
  if (!w || !dropped || !proved || !done || !th || !started) goto out;
  for (size_t k = 0; k < n; k++) {
    atomic_init(&dropped[k], 0);
    atomic_init(&proved[k], k == 0);
    atomic_init(&done[k], 0);
    asc_json_range *rg = &w[k].rg;
    w[k].path = path;
    w[k].spec = spec;
    rg->from = k ? next[k] : 0;
    rg->in_object = rc0 == '{';
    rg->next = next;
    rg->nnext = n;
    rg->index = k;
    rg->ends_at = k + 1;
    rg->dropped = dropped;
    rg->proved = proved;
    rg->stop = &stop;
    rg->done = &done[k];
    rg->done_all = done;
    rg->report = k == 0;
    rg->strings = k ? asc_strtab_new() : spec->strings;
    if (!rg->strings) goto out;
    asc_strtab_set_memory(rg->strings, memory / n);
  }
  for (size_t k = 1; k < n; k++) started[k] = pthread_create(&th[k], NULL, run, &w[k]) == 0;
  run(&w[0]);
  for (size_t k = 1; k < n; k++) {
    if (started[k])
      pthread_join(th[k], NULL);
    else if (!atomic_load(&dropped[k]) && !atomic_load(&stop))
      run(&w[k]); /* no thread for it: read it here */
  }
  asc_strtab_set_memory(spec->strings, memory);
  if (atomic_load(&stop)) {
    /* the progress callback said stop: with partial, the first range's rows are kept */
    rc = asc_fail(err, path, -1, 0, 0, "interrupted");
    if (spec->partial && w[0].ran) {
      *res = w[0].res;
      memset(&w[0].res, 0, sizeof w[0].res);
    }
    goto out;
  }
  /* the chain of ranges that handed over to each other; an error in it is the file's */
  for (size_t k = 0; k < n; k = w[k].rg.ends_at)
    if (!w[k].ran || w[k].rc) goto out;
  *res = w[0].res;
  memset(&w[0].res, 0, sizeof w[0].res);
  rc = 0;
  for (size_t k = w[0].rg.ends_at; k < n && !rc; k = w[k].rg.ends_at) rc = join(spec, res, &w[k]);
  if (rc) {
    asc_json_result_free(res, spec->nfields);
    rc = asc_fail(err, path, -1, 0, 0, "out of memory");
    goto out;
  }
  res->bytes = total;
  if (spec->progress) spec->progress(spec->progress_ud, total, total);
out:
  asc_strtab_set_memory(spec->strings, memory);
  if (w)
    for (size_t k = 0; k < n; k++) {
      if (w[k].ran && (w[k].rc == 0 || spec->partial)) asc_json_result_free(&w[k].res, spec->nfields);
      if (k && w[k].rg.strings) asc_strtab_free(w[k].rg.strings);
    }
  free(w);
  free(dropped);
  free(proved);
  free(done);
  free(th);
  free(started);
  return rc;
}
