/* Anonymous temporary files for outputs larger than memory, copied under a name on demand. */
#include "ascope/spool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int asc_spool_open(asc_atomic *a, asc_error *err) {
  memset(a, 0, sizeof *a);
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  if (snprintf(a->tmp, sizeof a->tmp, "%s/ascope-spool-XXXXXX", dir) >= (int)sizeof a->tmp)
    return asc_fail(err, dir, -1, 0, 0, "TMPDIR too long");
  int fd = mkstemp(a->tmp);
  if (fd < 0) return asc_fail(err, a->tmp, -1, 0, 0, "cannot create a temporary file: %s", strerror(errno));
  unlink(a->tmp); /* nameless from now on: it goes when it is closed */
  a->tmp[0] = '\0';
  if (!(a->f = fdopen(fd, "w+b"))) {
    int e = errno;
    close(fd);
    return asc_fail(err, dir, -1, 0, 0, "cannot open a temporary file: %s", strerror(e));
  }
  return 0;
}

int asc_spool_save(asc_atomic *a, const char *path, asc_error *err) {
  if (!a->f) return asc_fail(err, path, -1, 0, 0, "no spool");
  if (a->err_no || fflush(a->f) != 0)
    return asc_fail(err, path, -1, 0, 0, "cannot write: %s (nothing written)",
                    strerror(a->err_no ? a->err_no : errno));
  enum { CHUNK = 1 << 20 };
  char *buf = malloc(CHUNK);
  if (!buf) return asc_fail(err, path, -1, 0, 0, "out of memory");
  asc_atomic out;
  if (asc_atomic_open(&out, path, err)) {
    free(buf);
    return -1;
  }
  int read_error = fseeko(a->f, 0, SEEK_SET) != 0, rc = 0;
  size_t n;
  while (!read_error && rc == 0 && (n = fread(buf, 1, CHUNK, a->f)) > 0) rc = asc_atomic_write(&out, buf, n);
  read_error |= ferror(a->f);
  free(buf);
  /* later writes go after what is there */
  if (fseeko(a->f, 0, SEEK_END) != 0 || read_error) {
    clearerr(a->f);
    asc_atomic_abort(&out);
    return asc_fail(err, path, -1, 0, 0, "cannot read back the temporary file (nothing written)");
  }
  if (rc != 0) {
    asc_atomic_commit(&out, err); /* removes the temporary file and names the write error */
    return -1;
  }
  return asc_atomic_commit(&out, err);
}

void asc_spool_close(asc_atomic *a) {
  if (a->f) fclose(a->f);
  a->f = NULL;
}
