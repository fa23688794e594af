/* Interning: equal strings get equal ids across growth of the table; text stays where it was
 * put while the table grows (chunks, strings larger than a chunk); draining one table into
 * another maps every id to the id of the same text and empties the first. Past its memory a
 * table spills its text to a file and reads it back: the same ids and the same text, before
 * and after a fork, and through a drain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ascope/strtab.h"
#include "ctest.h"

/* the i-th test string: lengths from 0 to 900 bytes, so chunks end at many places */
static size_t text_of(int i, char *buf) {
  size_t n = (size_t)snprintf(buf, 64, "s%d:", i);
  size_t len = (size_t)(i * 37 % 901);
  for (size_t k = n; k < len; k++) buf[k] = (char)('a' + (k + (size_t)i) % 26);
  return len > n ? len : n;
}

/* n bytes of letters (step: how far apart the letters of neighbouring bytes are), to free() */
static char *big_text(size_t n, size_t step) {
  char *p = malloc(n);
  if (p)
    for (size_t k = 0; k < n; k++) p[k] = (char)('A' + k * step % 23);
  return p;
}

/* A string larger than any chunk (big_text(n, 1)) interned into t, then a short one after it:
 * the big text to free(), or NULL (a failure checked) when it could not be made. */
static char *intern_big(asc_strtab *t, size_t n, uint32_t *big_id, uint32_t *small_id) {
  char *big = big_text(n, 1);
  CHECK(big != NULL);
  if (!big) return NULL;
  CHECK(asc_strtab_intern(t, big, n, big_id) == 0);
  CHECK(asc_strtab_intern(t, "after the big one", 17, small_id) == 0);
  return big;
}

static void basics(void) {
  asc_strtab *t = asc_strtab_new();
  CHECK(t != NULL);
  uint32_t a, b, c;
  CHECK(asc_strtab_intern(t, "aten::empty", 11, &a) == 0);
  CHECK(asc_strtab_intern(t, "aten::matmul", 12, &b) == 0);
  CHECK(asc_strtab_intern(t, "aten::empty", 11, &c) == 0);
  CHECK(a != 0 && a != b && a == c);
  uint32_t ids[5000];
  char buf[32];
  for (int i = 0; i < 5000; i++) {
    int n = snprintf(buf, sizeof buf, "s%d", i);
    asc_strtab_intern(t, buf, (size_t)n, &ids[i]);
  }
  int same = 1;
  for (int i = 0; i < 5000; i++) {
    int n = snprintf(buf, sizeof buf, "s%d", i);
    uint32_t id;
    asc_strtab_intern(t, buf, (size_t)n, &id);
    size_t len;
    const char *s = asc_strtab_get(t, id, &len);
    same &= id == ids[i] && len == (size_t)n && memcmp(s, buf, len) == 0;
  }
  CHECK(same);
  CHECK(asc_strtab_count(t) == 5002);
  CHECK(asc_strtab_get(t, 0, NULL) == NULL);
  CHECK(asc_strtab_get(t, 5003, NULL) == NULL);
  uint32_t e;
  CHECK(asc_strtab_intern(t, "", 0, &e) == 0 && e != 0);
  asc_strtab_free(t);
}

/* pointers taken early stay valid and unchanged through 8 MB of later strings (in memory) */
static void stable_text(void) {
  asc_strtab *t = asc_strtab_new();
  asc_strtab_set_memory(t, SIZE_MAX);
  char buf[1024];
  enum { N = 20000 };
  static const char *early[N];
  static uint32_t ids[N];
  int ok = 1;
  for (int i = 0; i < N && ok; i++) {
    size_t n = text_of(i, buf);
    ok = asc_strtab_intern(t, buf, n, &ids[i]) == 0 && ids[i] == (uint32_t)i + 1;
    early[i] = asc_strtab_get(t, ids[i], NULL);
  }
  CHECK(ok);
  /* a string larger than any chunk, and one after it in a chunk of the usual size */
  size_t big_n = (size_t)3 << 20;
  uint32_t big_id, small_id, again;
  char *big = intern_big(t, big_n, &big_id, &small_id);
  if (!big) return;
  CHECK(asc_strtab_intern(t, big, big_n, &again) == 0 && again == big_id);
  size_t n;
  const char *s = asc_strtab_get(t, big_id, &n);
  CHECK(n == big_n && memcmp(s, big, big_n) == 0 && s[n] == '\0');
  /* strings filling the largest chunk size exactly (with their NUL) and one byte beyond it */
  uint32_t fit_id, over_id;
  size_t fit_n = ((size_t)2 << 20) - 1;
  CHECK(asc_strtab_intern(t, big + 1, fit_n, &fit_id) == 0);
  CHECK(asc_strtab_intern(t, big + 2, fit_n + 1, &over_id) == 0 && over_id != fit_id);
  s = asc_strtab_get(t, fit_id, &n);
  CHECK(n == fit_n && memcmp(s, big + 1, n) == 0 && s[n] == '\0');
  s = asc_strtab_get(t, over_id, &n);
  CHECK(n == fit_n + 1 && memcmp(s, big + 2, n) == 0 && s[n] == '\0');
  for (int i = 0; i < N && ok; i++) {
    size_t want = text_of(i, buf);
    const char *now = asc_strtab_get(t, ids[i], &n);
    ok = now == early[i] && n == want && memcmp(now, buf, n) == 0 && now[n] == '\0';
  }
  CHECK(ok);
  free(big);
  asc_strtab_free(t);
}

/* drain: every id of the source mapped to the id of its text in the target (strings the target
 * already has keep their ids), in the source's order; the source is left without text */
static void drain(void) {
  asc_strtab *to = asc_strtab_new(), *from = asc_strtab_new();
  char buf[1024];
  enum { N = 12000 };
  uint32_t id;
  for (int i = 0; i < N; i += 3) { /* the target has every third string already */
    size_t n = text_of(i, buf);
    asc_strtab_intern(to, buf, n, &id);
  }
  uint32_t before = asc_strtab_count(to);
  for (int i = N - 1; i >= 0; i--) { /* the source holds them all, last first */
    size_t n = text_of(i, buf);
    asc_strtab_intern(from, buf, n, &id);
  }
  uint32_t *map = malloc(sizeof *map * (N + 1));
  CHECK(map != NULL);
  if (!map) return;
  CHECK(asc_strtab_drain(to, from, map) == 0);
  CHECK(map[0] == 0);
  CHECK(asc_strtab_count(to) == N);
  int ok = 1;
  uint32_t next_new = before + 1;
  for (int k = 1; k <= N && ok; k++) {
    int i = N - k; /* source id k is string i */
    size_t want = text_of(i, buf), n;
    const char *s = asc_strtab_get(to, map[k], &n);
    ok = s && n == want && memcmp(s, buf, n) == 0;
    if (i % 3 == 0)
      ok &= map[k] <= before; /* it was there */
    else
      ok &= map[k] == next_new++; /* new ones in the source's order */
  }
  CHECK(ok);
  CHECK(asc_strtab_get(from, 1, NULL) == NULL);
  CHECK(asc_strtab_intern(from, "x", 1, &id) == -1);
  free(map);
  asc_strtab_free(from);
  asc_strtab_free(to);
}

/* strings 0..n-1 of text_of have the ids 1..n and their text, looked up and interned again */
static int holds(asc_strtab *t, int from, int n) {
  char buf[1024];
  int ok = 1;
  for (int i = from; i < n && ok; i++) {
    size_t want = text_of(i, buf), len;
    const char *s = asc_strtab_get(t, (uint32_t)i + 1, &len);
    ok = s && len == want && memcmp(s, buf, len) == 0 && s[len] == '\0';
    uint32_t id;
    ok &= asc_strtab_intern(t, buf, want, &id) == 0 && id == (uint32_t)i + 1;
  }
  return ok;
}

static int fill(asc_strtab *t, int from, int n) {
  char buf[1024];
  int ok = 1;
  for (int i = from; i < n && ok; i++) {
    uint32_t id;
    size_t len = text_of(i, buf);
    ok = asc_strtab_intern(t, buf, len, &id) == 0 && id == (uint32_t)i + 1;
  }
  return ok;
}

/* a table without memory: every chunk that fills goes to the file, and comes back the same */
static void spilled(void) {
  asc_strtab *t = asc_strtab_new();
  asc_strtab_set_memory(t, 0);
  enum { N = 20000 }; /* about 9 MB of text */
  CHECK(fill(t, 0, N));
  CHECK(!asc_strtab_resident(t, 1) && !asc_strtab_resident(t, N / 2));
  CHECK(asc_strtab_resident(t, N)); /* the last chunk is still being filled */
  CHECK(asc_strtab_bytes(t) < (size_t)6 << 20); /* the last chunk, a spare one and the index */
  CHECK(holds(t, 0, N));
  /* text read back stays good through ASC_STRTAB_WINDOWS - 1 more reads far from it */
  char buf[1024];
  size_t n0 = text_of(0, buf), n;
  const char *first = asc_strtab_get(t, 1, &n);
  for (int k = 1; k < ASC_STRTAB_WINDOWS; k++) asc_strtab_get(t, (uint32_t)(k * (N / ASC_STRTAB_WINDOWS)), NULL);
  CHECK(n == n0 && memcmp(first, buf, n0) == 0);
  /* a string larger than any chunk, spilled by the one after it */
  size_t big_n = (size_t)3 << 20;
  uint32_t big_id, small_id, again;
  char *big = intern_big(t, big_n, &big_id, &small_id);
  if (!big) return;
  for (int k = 0; k < 1000 && asc_strtab_resident(t, big_id); k++) { /* its chunk's last page fills */
    n = (size_t)snprintf(buf, sizeof buf, "filler %d", k);
    CHECK(asc_strtab_intern(t, buf, n, &again) == 0);
  }
  CHECK(!asc_strtab_resident(t, big_id));
  CHECK(asc_strtab_intern(t, big, big_n, &again) == 0 && again == big_id);
  const char *s = asc_strtab_get(t, big_id, &n);
  CHECK(n == big_n && memcmp(s, big, big_n) == 0 && s[n] == '\0');
  big[big_n / 2] = '#'; /* equal hash buckets are rare: equal length and other text is new */
  CHECK(asc_strtab_intern(t, big, big_n, &again) == 0 && again != big_id);
  CHECK(holds(t, 0, N));
  free(big);
  asc_strtab_free(t);
}

/* a forked child reads what the parent spilled and spills to a file of its own; the parent's
 * later spills do not touch the text the child reads */
static void forked(void) {
  asc_strtab *t = asc_strtab_new();
  asc_strtab_set_memory(t, 0);
  enum { N = 8000, M = 16000 };
  CHECK(fill(t, 0, N));
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int ok = holds(t, 0, N) && fill(t, N, M) && holds(t, 0, M);
    asc_strtab_free(t);
    _exit(ok ? 0 : 1);
  }
  CHECK(fill(t, N, M));
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(holds(t, 0, M));
  asc_strtab_free(t);
}

/* a spilled source drains into a spilling target: the same map as from memory */
static void drain_spilled(void) {
  asc_strtab *to = asc_strtab_new(), *from = asc_strtab_new();
  asc_strtab_set_memory(to, 0);
  asc_strtab_set_memory(from, 0);
  enum { N = 12000 };
  CHECK(fill(from, 0, N));
  uint32_t *map = malloc(sizeof *map * (N + 1));
  CHECK(map != NULL);
  if (!map) return;
  CHECK(asc_strtab_drain(to, from, map) == 0);
  int ok = 1;
  for (int k = 1; k <= N; k++) ok &= map[k] == (uint32_t)k;
  CHECK(ok);
  CHECK(holds(to, 0, N));
  CHECK(asc_strtab_get(from, 1, NULL) == NULL && asc_strtab_get(from, N, NULL) == NULL);
  free(map);
  asc_strtab_free(from);
  asc_strtab_free(to);
}

/* ASCOPE_STRING_MEMORY, in MiB, sets a new table's memory; a value that is not one is the default */
static void memory_from_env(void) {
  setenv("ASCOPE_STRING_MEMORY", "0", 1);
  asc_strtab *t = asc_strtab_new();
  CHECK(fill(t, 0, 4000) && !asc_strtab_resident(t, 1));
  asc_strtab_free(t);
  setenv("ASCOPE_STRING_MEMORY", "-3", 1);
  t = asc_strtab_new();
  CHECK(fill(t, 0, 4000) && asc_strtab_resident(t, 1));
  asc_strtab_free(t);
  unsetenv("ASCOPE_STRING_MEMORY");
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* a string interned from the table's own text, which sits in the chunk that leaves memory for
 * the next one that the string needs: copied before that chunk goes */
static void own_text(void) {
  asc_strtab *t = asc_strtab_new();
  asc_strtab_set_memory(t, 0);
  size_t big_n = ((size_t)3 << 20) + 123;
  char *big = big_text(big_n, 7);
  CHECK(big != NULL);
  if (!big) return;
  uint32_t big_id, part_id;
  CHECK(asc_strtab_intern(t, big, big_n, &big_id) == 0);
  const char *s = asc_strtab_get(t, big_id, NULL);
  CHECK(asc_strtab_resident(t, big_id));
  CHECK(asc_strtab_intern(t, s + 1, big_n - 1, &part_id) == 0);
  CHECK(!asc_strtab_resident(t, big_id)); /* it left, after the copy */
  size_t n;
  s = asc_strtab_get(t, part_id, &n);
  CHECK(n == big_n - 1 && memcmp(s, big + 1, n) == 0);
  s = asc_strtab_get(t, big_id, &n);
  CHECK(n == big_n && memcmp(s, big, n) == 0);
  free(big);
  asc_strtab_free(t);
}

#ifndef UNDER_ASAN
static long vm_pages(void) {
  long size = -1;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld", &size) != 1) size = -1;
    fclose(f);
  }
  return size;
}

/* a chunk that cannot be had leaves the table as it was: the next string goes in; and a table
 * of a string over 2 MiB gives all of its address space back */
static void no_room(void) {
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    asc_strtab *t = asc_strtab_new();
    asc_strtab_set_memory(t, 0);
    int ok = fill(t, 0, 300);
    size_t huge = (size_t)128 << 20;
    char *h = calloc(huge, 1);
    long pages = vm_pages();
    struct rlimit lim = {(rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)32 << 20), RLIM_INFINITY};
    lim.rlim_max = lim.rlim_cur;
    uint32_t id;
    ok = ok && h && pages > 0 && setrlimit(RLIMIT_AS, &lim) == 0;
    ok = ok && asc_strtab_intern(t, h, huge, &id) == -1;
    ok = ok && asc_strtab_intern(t, "short", 5, &id) == 0 && id == 301 && holds(t, 0, 300);
    size_t n;
    const char *s = asc_strtab_get(t, id, &n);
    ok = ok && s && n == 5 && memcmp(s, "short", 5) == 0;
    free(h);
    asc_strtab_free(t);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  size_t big_n = ((size_t)3 << 20) + 123;
  char *big = calloc(big_n, 1);
  CHECK(big != NULL);
  if (!big) return;
  long before = vm_pages();
  for (int k = 0; k < 50; k++) {
    asc_strtab *t = asc_strtab_new();
    uint32_t id;
    big[0] = (char)k;
    CHECK(asc_strtab_intern(t, big, big_n, &id) == 0);
    asc_strtab_free(t);
  }
  CHECK(vm_pages() - before < 1024); /* 50 x 2 MiB when the tail of each mapping stayed */
  free(big);
}
#endif

int main(void) {
  basics();
  stable_text();
  drain();
  spilled();
  forked();
  drain_spilled();
  memory_from_env();
  own_text();
#ifndef UNDER_ASAN
  no_room();
#endif
  CTEST_END();
}
