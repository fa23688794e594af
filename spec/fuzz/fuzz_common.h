/* Shared by the libFuzzer harnesses: the primitives read paths, so each input is written to a
 * file in memory (/dev/shm when there is one) first. */
#ifndef ASCOPE_FUZZ_COMMON_H
#define ASCOPE_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *fuzz_path(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0])
    snprintf(path, sizeof path, "%s/ascope-fuzz-%d", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
             (int)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  if (fclose(f) != 0) abort();
  return path;
}

#endif
