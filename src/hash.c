/* The process's hash seed (see ascope/hash.h). */
#include "ascope/hash.h"

#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static uint64_t seed;

/* Drawn before main (and when the Lua module is loaded), so before any thread reads it. */
__attribute__((constructor)) static void draw_seed(void) {
  uint64_t s = 0;
  if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    s = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16) ^
        (uint64_t)(uintptr_t)&s;
  }
  seed = asc_hash_step(s, 0x9E3779B97F4A7C15ULL);
}

uint64_t asc_hash_seed(void) { return seed; }
