/* The line prefilter behind plog (fs.grep): literals from the first line of the input, searched
 * in the whole input; every hit must be a line that holds one of them. */
#include <string.h>

#include "ascope/fs.h"
#include "fuzz_common.h"

typedef struct {
  const char *const *lits;
  size_t n;
} want;

static int hit(void *ud, long long line, const char *text, size_t len) {
  const want *w = ud;
  (void)line;
  for (size_t i = 0; i < w->n; i++)
    if (memmem(text, len, w->lits[i], strlen(w->lits[i]))) return 0;
  fprintf(stderr, "fs.grep returned a line without any literal\n");
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_path(data, size);
  char first[64] = "";
  size_t k = 0;
  while (k < size && k < sizeof first - 1 && data[k] != '\n' && data[k] != '\r' && data[k] != '\0')
    first[k] = (char)data[k], k++;
  first[k] = '\0';
  const char *lits[3] = {"ERROR", "EE", first};
  want w = {lits, first[0] ? 3 : 2};
  asc_error err;
  asc_grep(path, lits, w.n, hit, &w, &err);
  return 0;
}
