/* Minimal C test harness: CHECK(cond) records a failure with its place and keeps going;
 * CTEST_END prints "C: N passed, N failed" and returns the exit status. */
#ifndef ASCOPE_CTEST_H
#define ASCOPE_CTEST_H

#include <stdio.h>

static int ctest_pass, ctest_fail;

#define CHECK(cond)                                                                                          \
  do {                                                                                                       \
    if (cond) {                                                                                              \
      ctest_pass++;                                                                                          \
    } else {                                                                                                 \
      ctest_fail++;                                                                                          \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                        \
    }                                                                                                        \
  } while (0)

#define CTEST_END()                                                                                          \
  do {                                                                                                       \
    printf("C: %d passed, %d failed\n", ctest_pass, ctest_fail);                                             \
    return ctest_fail ? 1 : 0;                                                                               \
  } while (0)

#endif
