/* Spools: bytes held in a nameless temporary file, saved under a name as often as asked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ascope/spool.h"
#include "ctest.h"

/* The bytes of a file (at most cap), or -1 when it cannot be read. */
static long slurp(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  size_t n = fread(buf, 1, cap, f);
  fclose(f);
  return (long)n;
}

int main(void) {
  char dir[] = "/tmp/ascope-spool-test-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  setenv("TMPDIR", dir, 1);
  asc_atomic a;
  asc_error err;
  CHECK(asc_spool_open(&a, &err) == 0);
  /* nameless: nothing in TMPDIR while it is open */
  char probe[4200];
  snprintf(probe, sizeof probe, "test -z \"$(ls -A %s)\"", dir);
  CHECK(system(probe) == 0);
  /* more than one copy buffer (1 MiB), so the save loops */
  size_t total = (3u << 20) + 7;
  char *chunk = malloc(total);
  CHECK(chunk != NULL);
  if (!chunk) CTEST_END();
  for (size_t i = 0; i < total; i++) chunk[i] = (char)('a' + i % 26);
  CHECK(asc_atomic_write(&a, chunk, total) == 0);
  char path[4200], again[4200];
  snprintf(path, sizeof path, "%s/out/first.txt", dir);
  snprintf(again, sizeof again, "%s/out/second.txt", dir);
  CHECK(asc_spool_save(&a, path, &err) == 0);
  CHECK(asc_atomic_write(&a, "tail", 4) == 0); /* writes after a save go after what is there */
  CHECK(asc_spool_save(&a, again, &err) == 0);
  char *back = malloc(total + 16);
  CHECK(back != NULL);
  if (back) {
    CHECK(slurp(path, back, total + 16) == (long)total);
    CHECK(memcmp(back, chunk, total) == 0);
    CHECK(slurp(again, back, total + 16) == (long)total + 4);
    CHECK(memcmp(back + total, "tail", 4) == 0);
  }
  /* a target that cannot be made names itself; the spool stays usable */
  CHECK(asc_spool_save(&a, "/proc/ascope-no/such.txt", &err) != 0);
  CHECK(strstr(err.file, "/proc/ascope-no") != NULL);
  asc_spool_close(&a);
  asc_spool_close(&a); /* twice is harmless */
  free(back);
  free(chunk);
  snprintf(probe, sizeof probe, "rm -rf %s", dir);
  CHECK(system(probe) == 0);
  CTEST_END();
}
