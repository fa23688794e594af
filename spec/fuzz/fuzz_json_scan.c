/* json.scan on arbitrary bytes: fields of every type, predicates, metadata, and a small read
 * chunk so events run across refills. The same input is scanned again in ranges, one thread
 * each, starting at offsets taken from the input (anywhere: in strings, escapes, UTF-8) or
 * guessed by the splitter; the result must be the one-thread scan's in every respect: return
 * code, error, rows, string ids, the strings interned and their order, metadata, warning. */
#include <stdlib.h>
#include <string.h>

#include "ascope/json.h"
#include "fuzz_common.h"

static void differ(const char *what) {
  fprintf(stderr, "json.scan in ranges differs from one thread: %s\n", what);
  abort();
}

static void same_col(const asc_col *a, const asc_col *b, const char *what) {
  if (a->kind != b->kind || a->n != b->n) differ(what);
  if (a->n && memcmp(a->v.p, b->v.p, a->n * asc_kind_size(a->kind)) != 0) differ(what);
}

static void same_strings(const asc_strtab *a, const asc_strtab *b) {
  uint32_t n = asc_strtab_count(a);
  if (n != asc_strtab_count(b)) differ("string count");
  for (uint32_t id = 1; id <= n; id++) {
    size_t la, lb;
    const char *sa = asc_strtab_get(a, id, &la), *sb = asc_strtab_get(b, id, &lb);
    if (la != lb || memcmp(sa, sb, la) != 0) differ("interned strings");
  }
}

static int by_value(const void *x, const void *y) {
  long long a = *(const long long *)x, b = *(const long long *)y;
  return a < b ? -1 : a > b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_path(data, size);
  static const char *cats[] = {"cpu_op", "python_function"};
  asc_jfield fields[] = {{"name", 0, ASC_JT_STRING},
                         {"ts", 0, ASC_JT_US},
                         {"dur", 0, ASC_JT_INT},
                         {"x", 1, ASC_JT_NUM},
                         {"Call stack", 1, ASC_JT_STRING}};
  asc_jpred preds[] = {{"cat", 0, ASC_PRED_IN, cats, 2}, {"ph", 0, ASC_PRED_EXISTS, NULL, 0}};
  asc_json_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.fields = fields;
  spec.nfields = sizeof fields / sizeof *fields;
  spec.preds = preds;
  spec.npreds = size && data[0] & 1 ? 2 : 0;
  spec.want_meta = 1;
  spec.partial = size > 1 && data[1] & 1;
  spec.chunk = 64;
  spec.strings = asc_strtab_new();
  if (!spec.strings) return 0;
  asc_json_result res;
  asc_error err;
  int rc = asc_json_scan(path, &spec, &res, &err);

  /* the ranges: up to three starts from the input's last bytes, or the splitter's guesses */
  asc_json_spec par = spec;
  long long at[3];
  size_t nat = size > 4 ? data[size - 1] % 4 : 0;
  for (size_t i = 0; i < nat; i++) at[i] = (long long)((data[size - 2 - i] * 257u + i * 7919u) % size);
  qsort(at, nat, sizeof *at, by_value);
  par.split_at = at;
  par.nsplit_at = nat;
  par.threads = nat ? 1 : 2;
  par.min_range = 1;
  par.strings = asc_strtab_new();
  if (!par.strings) abort();
  asc_json_result pres;
  asc_error perr;
  int prc = asc_json_scan(path, &par, &pres, &perr);
  if (rc != prc) differ("return code");
  if (rc && (strcmp(err.msg, perr.msg) != 0 || err.offset != perr.offset || err.line != perr.line ||
             err.column != perr.column))
    differ("error");
  if (rc == 0 || spec.partial) {
    if (res.nrows != pres.nrows || res.events != pres.events || strcmp(res.warning, pres.warning) != 0)
      differ("rows, events or warning");
    for (size_t i = 0; i < spec.nfields; i++) same_col(&res.cols[i], &pres.cols[i], fields[i].name);
    same_col(&res.meta_what, &pres.meta_what, "metadata");
    same_col(&res.meta_pid, &pres.meta_pid, "metadata");
    same_col(&res.meta_tid, &pres.meta_tid, "metadata");
    same_col(&res.meta_name, &pres.meta_name, "metadata");
    same_strings(spec.strings, par.strings);
    asc_json_result_free(&res, spec.nfields);
    asc_json_result_free(&pres, spec.nfields);
  }
  asc_strtab_free(spec.strings);
  asc_strtab_free(par.strings);
  return 0;
}
