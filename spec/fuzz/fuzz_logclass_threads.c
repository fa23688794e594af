/* The plog classifier on several threads: the input repeated into a file of three blocks and a
 * bit, so that a line, a header or a multi-line record falls across each block boundary somewhere,
 * is scanned by one thread and by three. The lines handed over, and all they say, must be the
 * same, in the same order. This is the costly property (some 400 KB scanned twice an input), so
 * it has a target of its own: in fuzz_logclass it cut the rate of every other check to a few
 * inputs a second. Crashes, hangs and memory errors are caught by libFuzzer and the sanitizers. */
#include <string.h>

#include "ascope/logclass.h"
#include "fuzz_common.h"

/* FNV-1a over everything a line tells */
static void mix(uint64_t *h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 0x100000001b3ull;
}

static void mix_span(uint64_t *h, const char *p, size_t n) {
  int none = p == NULL;
  mix(h, &none, sizeof none);
  mix(h, &n, sizeof n);
  if (p) mix(h, p, n);
}

typedef struct digest {
  uint64_t h;
  size_t lines, nfields;
} digest;

static int digest_line(void *ud, const asc_logclass_line *ln) {
  digest *d = ud;
  d->lines++;
  mix(&d->h, &ln->number, sizeof ln->number);
  mix_span(&d->h, ln->text, ln->len);
  mix(&d->h, &ln->cut, sizeof ln->cut);
  mix(&d->h, &ln->is_error, sizeof ln->is_error);
  mix_span(&d->h, ln->time.p, ln->time.n);
  mix(&d->h, &ln->nmatched, sizeof ln->nmatched);
  mix(&d->h, ln->matched, ln->nmatched * sizeof *ln->matched);
  for (size_t i = 0; i < d->nfields; i++) mix_span(&d->h, ln->fields[i].p, ln->fields[i].n);
  return 0;
}

static void threaded(const uint8_t *data, size_t size) {
  static asc_logclass *lc;
  if (!lc) {
    static const char *const literals[] = {"[ERROR]", "E"};
    static const char *const codes[] = {"E%d%d%d%d%d", "EZ%d%d%d%d"};
    static const char *const words[] = {"aicore", "timeout"};
    static const char *const seq[] = {"Error", "op"};
    static const char *const ge[] = {"GE"};
    static const asc_logclass_rule rules[] = {{ASC_LC_WORD, 0, codes, 2, NULL, 0},
                                              {ASC_LC_ANY, 1, words, 2, ge, 1},
                                              {ASC_LC_SEQUENCE, 1, seq, 2, NULL, 0}};
    static const char *const task[] = {"task_id[=:]%s*(%d+)"};
    static const char *const any[] = {"(E.)"};
    static const asc_logclass_field fields[] = {{task, 1}, {any, 1}};
    asc_logclass_spec spec = {literals, 2,         "^%[(%u+)%]%s+([%w_%-]+):(%d*)%s*(.*)$",
                              1,        2,         3,
                              4,        NULL,      0,
                              "ERROR",  "[ERROR]", rules,
                              3,        fields,    2};
    asc_error err;
    if (asc_logclass_new(&spec, &lc, &err) != 0) abort();
    asc_logclass_set_block(lc, ASC_LOGCLASS_BLOCK_MIN);
  }
  if (size == 0) return;
  /* the input over and over: a file of three blocks and a bit, cut wherever the input falls */
  const char *path = fuzz_path(data, 0);
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  for (size_t n = 0; n < 3 * ASC_LOGCLASS_BLOCK_MIN + 1000; n += size)
    if (fwrite(data, 1, size, f) != size) abort();
  if (fclose(f) != 0) abort();
  digest one = {0xcbf29ce484222325ull, 0, 2}, many = one;
  asc_error err;
  asc_logclass_set_threads(lc, 1);
  if (asc_logclass_scan(lc, path, digest_line, &one, &err) != 0) abort();
  asc_logclass_set_threads(lc, 3);
  if (asc_logclass_scan(lc, path, digest_line, &many, &err) != 0) abort();
  if (one.h != many.h || one.lines != many.lines) {
    fprintf(stderr, "threads saw %zu lines, one thread %zu: not the same\n", many.lines, one.lines);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  threaded(data, size);
  return 0;
}
