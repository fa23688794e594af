/* The call-stack tree against a plain model: the input is a list of stacks (split at byte 0x01;
 * separators, NUL, white space and anything else inside them), added as plain strings to one
 * tree and from a string table that keeps no text in memory (every stack read back from its
 * file, with other strings between them) to another. Each stack's leaf id must be the one the
 * model gives (frames split and trimmed as documented, one node per distinct parent and frame,
 * ids in creation order), and both trees must write the model's members byte for byte. Crashes,
 * hangs and memory errors are caught by libFuzzer and the sanitizers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/json_escape.h"
#include "ascope/stacktree.h"
#include "ascope/strtab.h"

#define INPUT_MAX 4096 /* the model's linear search is quadratic: the rest of a longer input is not read */
#define MAX_FRAMES (INPUT_MAX + 1)

typedef struct {
  const char *s;
  size_t len;
  uint32_t parent;
} model_node;

static model_node nodes[MAX_FRAMES];
static uint32_t nnodes;

static int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* the model: a frame is the text between separators (";\r\n", ";\n", NUL) trimmed of white
 * space, empty ones dropped, innermost first; found by a linear search over every node */
static uint32_t model_add(const char *s, size_t n) {
  static size_t at[MAX_FRAMES], len[MAX_FRAMES];
  size_t k = 0, start = 0;
  for (size_t i = 0; i <= n; i++) {
    size_t sep = 0;
    if (i == n || s[i] == '\0')
      sep = 1;
    else if (s[i] == ';' && i + 1 < n && s[i + 1] == '\n')
      sep = 2;
    else if (s[i] == ';' && i + 2 < n && s[i + 1] == '\r' && s[i + 2] == '\n')
      sep = 3;
    if (!sep) continue;
    size_t a = start, e = i;
    while (a < e && is_space(s[a])) a++;
    while (e > a && is_space(s[e - 1])) e--;
    if (e > a) {
      at[k] = a;
      len[k++] = e - a;
    }
    i += sep - 1;
    start = i + 1;
  }
  uint32_t parent = 0;
  while (k-- > 0) {
    uint32_t found = 0;
    for (uint32_t id = 1; id <= nnodes && !found; id++)
      if (nodes[id - 1].parent == parent && nodes[id - 1].len == len[k] &&
          memcmp(nodes[id - 1].s, s + at[k], len[k]) == 0)
        found = id;
    if (!found) {
      if (nnodes == MAX_FRAMES) abort(); /* INPUT_MAX bytes hold fewer frames */
      nodes[nnodes] = (model_node){s + at[k], len[k], parent};
      found = ++nnodes;
    }
    parent = found;
  }
  return parent;
}

typedef struct {
  char *p;
  size_t n, cap;
} buf;

static void put(void *ud, const char *p, size_t n) {
  buf *b = ud;
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2;
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

static void model_write(buf *b) {
  char num[64];
  for (uint32_t id = 1; id <= nnodes; id++) {
    int k = snprintf(num, sizeof num, "%s\"%u\":{\"name\":\"", id > 1 ? ",\n" : "", id);
    put(b, num, (size_t)k);
    asc_json_escape(nodes[id - 1].s, nodes[id - 1].len, put, b);
    if (nodes[id - 1].parent) {
      k = snprintf(num, sizeof num, "\",\"parent\":\"%u", nodes[id - 1].parent);
      put(b, num, (size_t)k);
    }
    put(b, "\"}", 2);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *s = (const char *)data;
  if (size > INPUT_MAX) size = INPUT_MAX;
  asc_stacktree *plain = asc_stacktree_new(), *interned = asc_stacktree_new();
  asc_strtab *st = asc_strtab_new();
  if (!plain || !interned || !st) abort();
  asc_strtab_set_memory(st, 0);
  nnodes = 0;
  char pad[3000];
  size_t start = 0, count = 0;
  for (size_t i = 0; i <= size; i++) {
    if (i < size && data[i] != 1) continue;
    const char *stack = s + start;
    size_t n = i - start;
    start = i + 1;
    uint32_t want = model_add(stack, n), a, b, id, pad_id;
    if (asc_stacktree_add(plain, stack, n, &a) != 0 || a != want) abort();
    /* a string of its own after each stack: every stack's chunk fills and leaves memory */
    memset(pad, 'a' + (int)(count++ % 26), sizeof pad);
    memcpy(pad, &count, sizeof count);
    if (asc_strtab_intern(st, stack, n, &id) != 0 || asc_strtab_intern(st, pad, sizeof pad, &pad_id) != 0)
      abort();
    if (asc_stacktree_add_interned(interned, st, id, &b) != 0 || b != want) abort();
  }
  buf want = {0}, got_plain = {0}, got_interned = {0};
  model_write(&want);
  if (asc_stacktree_write(plain, SIZE_MAX, put, &got_plain)) abort();
  if (asc_stacktree_write(interned, SIZE_MAX, put, &got_interned)) abort();
  if (got_plain.n != want.n || (want.n && memcmp(got_plain.p, want.p, want.n) != 0)) abort();
  if (got_interned.n != want.n || (want.n && memcmp(got_interned.p, want.p, want.n) != 0)) abort();
  free(want.p);
  free(got_plain.p);
  free(got_interned.p);
  asc_stacktree_free(plain);
  asc_stacktree_free(interned);
  asc_strtab_free(st);
  return 0;
}
