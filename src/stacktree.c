/* Call stacks as a tree of interned frames (see ascope/stacktree.h). */
#include "ascope/stacktree.h"
#include "ascope/checked.h"
#include "ascope/json_escape.h"
#include "ascope/strtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t key; /* parent << 32 | frame text id; 0: empty slot (frame ids are never 0) */
  uint32_t node;
} slot;

typedef struct {
  size_t at, len;
} piece;

struct asc_stacktree {
  asc_strtab *text; /* frame text -> id */
  slot *slots;
  size_t cap, used; /* cap: a power of two */
  uint32_t nodes;
  char *out; /* the JSON members */
  size_t n, outcap;
  piece *pieces; /* the frames of the stack being added */
  size_t npieces, piececap;
  int failed; /* an append ran out of memory */
};

asc_stacktree *asc_stacktree_new(void) {
  asc_stacktree *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->text = asc_strtab_new();
  t->cap = 1024;
  t->slots = calloc(t->cap, sizeof *t->slots);
  if (!t->text || !t->slots) {
    asc_stacktree_free(t);
    return NULL;
  }
  return t;
}

void asc_stacktree_free(asc_stacktree *t) {
  if (!t) return;
  if (t->text) asc_strtab_free(t->text);
  free(t->slots);
  free(t->out);
  free(t->pieces);
  free(t);
}

static uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}

static int grow_slots(asc_stacktree *t) {
  size_t cap;
  if (asc_size_mul(t->cap, 2, &cap)) return -1;
  slot *s = asc_alloc_array(cap, sizeof *s);
  if (!s) return -1;
  memset(s, 0, cap * sizeof *s);
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->slots[i].key) continue;
    size_t j = (size_t)mix(t->slots[i].key) & (cap - 1);
    while (s[j].key) j = (j + 1) & (cap - 1);
    s[j] = t->slots[i];
  }
  free(t->slots);
  t->slots = s;
  t->cap = cap;
  return 0;
}

static void put(void *ud, const char *p, size_t len) {
  asc_stacktree *t = ud;
  if (t->failed) return;
  size_t need;
  if (asc_size_add(t->n, len, &need)) {
    t->failed = 1;
    return;
  }
  if (need > t->outcap) {
    size_t cap = t->outcap ? t->outcap : 4096;
    while (cap < need) {
      if (asc_size_mul(cap, 2, &cap)) {
        t->failed = 1;
        return;
      }
    }
    char *o = realloc(t->out, cap);
    if (!o) {
      t->failed = 1;
      return;
    }
    t->out = o;
    t->outcap = cap;
  }
  memcpy(t->out + t->n, p, len);
  t->n = need;
}

/* the node of (parent, frame), created (and its member written) when new */
static int node_of(asc_stacktree *t, uint32_t parent, const char *s, size_t len, uint32_t *node) {
  uint32_t fid;
  if (asc_strtab_intern(t->text, s, len, &fid)) return -1;
  uint64_t key = (uint64_t)parent << 32 | fid;
  size_t j = (size_t)mix(key) & (t->cap - 1);
  while (t->slots[j].key) {
    if (t->slots[j].key == key) {
      *node = t->slots[j].node;
      return 0;
    }
    j = (j + 1) & (t->cap - 1);
  }
  if (t->nodes == UINT32_MAX) return -1;
  uint32_t id = ++t->nodes;
  t->slots[j].key = key;
  t->slots[j].node = id;
  t->used++;
  char num[48];
  int k = snprintf(num, sizeof num, "%s\"%u\":{\"name\":\"", id > 1 ? ",\n" : "", (unsigned)id);
  put(t, num, (size_t)k);
  asc_json_escape(s, len, put, t);
  k = parent ? snprintf(num, sizeof num, "\",\"parent\":\"%u\"}", (unsigned)parent)
             : snprintf(num, sizeof num, "\"}");
  put(t, num, (size_t)k);
  if (t->failed) return -1;
  *node = id;
  if (t->used * 2 > t->cap) return grow_slots(t);
  return 0;
}

static int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static int add_piece(asc_stacktree *t, const char *s, size_t at, size_t end) {
  while (at < end && is_space(s[at])) at++;
  while (end > at && is_space(s[end - 1])) end--;
  if (at == end) return 0;
  if (t->npieces == t->piececap) {
    size_t cap;
    if (asc_size_mul(t->piececap ? t->piececap : 8, 2, &cap)) return -1;
    piece *p = asc_realloc_array(t->pieces, cap, sizeof *p);
    if (!p) return -1;
    t->pieces = p;
    t->piececap = cap;
  }
  t->pieces[t->npieces++] = (piece){at, end - at};
  return 0;
}

int asc_stacktree_add(asc_stacktree *t, const char *s, size_t n, uint32_t *leaf) {
  t->npieces = 0;
  size_t start = 0, i = 0;
  while (i < n) {
    size_t sep = 0;
    if (s[i] == '\0')
      sep = 1;
    else if (s[i] == ';' && i + 1 < n && s[i + 1] == '\n')
      sep = 2;
    else if (s[i] == ';' && i + 2 < n && s[i + 1] == '\r' && s[i + 2] == '\n')
      sep = 3;
    if (sep) {
      if (add_piece(t, s, start, i)) return -1;
      i += sep;
      start = i;
    } else {
      i++;
    }
  }
  if (add_piece(t, s, start, n)) return -1;
  uint32_t parent = 0;
  for (size_t k = t->npieces; k-- > 0;) {
    if (node_of(t, parent, s + t->pieces[k].at, t->pieces[k].len, &parent)) return -1;
  }
  *leaf = parent;
  return 0;
}

const char *asc_stacktree_json(const asc_stacktree *t, size_t *n) {
  *n = t->n;
  return t->out ? t->out : "";
}
