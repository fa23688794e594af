/* The typed CSV reader on arbitrary bytes: columns of every type, required and optional, bad
 * cells as errors or as nulls; and the record reader (libcsv) over the same bytes. */
#include <string.h>

#include "ascope/csv.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_path(data, size);
  asc_csv_colspec cols[] = {
      {"a", ASC_CT_STRING, 0}, {"b", ASC_CT_INTEGER, 1}, {"c", ASC_CT_NUMBER, 1}, {"d", ASC_CT_US, 1}};
  asc_csv_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.cols = cols;
  spec.ncols = 4;
  spec.bad_as_null = size && data[0] & 1;
  spec.strings = asc_strtab_new();
  if (!spec.strings) return 0;
  asc_csv_result res;
  asc_error err;
  if (asc_csv_read(path, &spec, &res, &err) == 0) asc_csv_result_free(&res, spec.ncols);
  asc_strtab_free(spec.strings);
  asc_csv_reader *r;
  if (asc_csv_open(path, &r, &err) == 0) {
    asc_csv_record rec;
    while (asc_csv_next(r, &rec, &err) > 0) {
    }
    asc_csv_close(r);
  }
  return 0;
}
