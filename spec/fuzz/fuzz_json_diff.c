/* Differential: json.scan accepts exactly the documents yajl accepts (with the byte order mark
 * the scan allows removed first, and UTF-8 unchecked as the scan leaves it). Valid JSON the scan
 * cannot use as a trace (no event array, nesting deeper than 256) is the one allowed difference,
 * and then the scan must not call it invalid. */
#include <string.h>
#include <yajl/yajl_parse.h>

#include "ascope/json.h"
#include "fuzz_common.h"

static int yajl_accepts(const uint8_t *p, size_t n) {
  if (n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3, n -= 3;
  yajl_handle h = yajl_alloc(NULL, NULL, NULL);
  if (!h) abort();
  yajl_config(h, yajl_dont_validate_strings, 1);
  int ok = yajl_parse(h, p, n) == yajl_status_ok && yajl_complete_parse(h) == yajl_status_ok;
  yajl_free(h);
  return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_path(data, size);
  asc_jfield fields[] = {{"name", 0, ASC_JT_STRING}, {"ts", 0, ASC_JT_US}, {"v", 1, ASC_JT_NUM}};
  asc_json_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.fields = fields;
  spec.nfields = 3;
  spec.want_meta = 1;
  spec.chunk = 16 + (size ? data[size - 1] % 64 : 0);
  spec.strings = asc_strtab_new();
  if (!spec.strings) return 0;
  asc_json_result res;
  asc_error err;
  int scan_ok = asc_json_scan(path, &spec, &res, &err) == 0;
  if (scan_ok) asc_json_result_free(&res, spec.nfields);
  asc_strtab_free(spec.strings);
  int yajl_ok = yajl_accepts(data, size);
  if (scan_ok && !yajl_ok) {
    fprintf(stderr, "json.scan accepted what yajl rejects\n");
    abort();
  }
  if (!scan_ok && yajl_ok && strncmp(err.msg, "invalid JSON", 12) == 0) {
    fprintf(stderr, "json.scan called valid JSON invalid: %s\n", err.msg);
    abort();
  }
  if (!scan_ok && !yajl_ok && strncmp(err.msg, "invalid JSON", 12) != 0 &&
      strcmp(err.msg, "the file is empty") != 0) {
    fprintf(stderr, "json.scan gave a non-syntax reason for invalid JSON: %s\n", err.msg);
    abort();
  }
  return 0;
}
