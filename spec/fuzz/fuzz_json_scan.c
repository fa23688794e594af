/* json.scan on arbitrary bytes: fields of every type, predicates, metadata, and a small read
 * chunk so events run across refills. */
#include <string.h>

#include "ascope/json.h"
#include "fuzz_common.h"

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
  if (rc == 0 || spec.partial) asc_json_result_free(&res, spec.nfields);
  asc_strtab_free(spec.strings);
  return 0;
}
