/* Call stacks as a tree of interned frames (see ascope/stacktree.h). */
#include "ascope/stacktree.h"
#include "ascope/checked.h"
#include "ascope/json_escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t hash; /* of (parent, frame text) */
  uint32_t node; /* 0: empty slot */
} slot;

typedef struct {
  size_t at; /* the frame's text: in out when it needed no escape (plain), else in scratch */
  uint32_t len, parent;
  int plain;
} node;

typedef struct {
  size_t at, len;
} piece;

struct asc_stacktree {
  node *nodes_; /* by id - 1: where each frame's text is (plain names are not copied twice) */
  size_t nodecap;
  char *scratch;                /* the text of frames that needed an escape: two that escape alike */
  size_t scratch_n, scratchcap; /* (invalid UTF-8 -> U+FFFD) are still two frames */
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
  t->cap = 1024;
  t->slots = calloc(t->cap, sizeof *t->slots);
  if (!t->slots) {
    asc_stacktree_free(t);
    return NULL;
  }
  return t;
}

void asc_stacktree_free(asc_stacktree *t) {
  if (!t) return;
  free(t->nodes_);
  free(t->scratch);
  free(t->slots);
  free(t->out);
  free(t->pieces);
  free(t);
}

static uint64_t hash_of(uint32_t parent, const char *s, size_t n) {
  uint64_t h = 1469598103934665603ULL ^ parent;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

static int grow_slots(asc_stacktree *t) {
  size_t cap;
  if (asc_size_mul(t->cap, 2, &cap)) return -1;
  slot *s = asc_alloc_array(cap, sizeof *s);
  if (!s) return -1;
  memset(s, 0, cap * sizeof *s);
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->slots[i].node) continue;
    size_t j = (size_t)t->slots[i].hash & (cap - 1);
    while (s[j].node) j = (j + 1) & (cap - 1);
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

static void put_scratch(void *ud, const char *p, size_t len) {
  asc_stacktree *t = ud;
  if (t->failed) return;
  size_t need;
  if (asc_size_add(t->scratch_n, len, &need)) {
    t->failed = 1;
    return;
  }
  if (need > t->scratchcap) {
    size_t cap;
    if (asc_size_mul(need, 2, &cap)) {
      t->failed = 1;
      return;
    }
    char *o = realloc(t->scratch, cap);
    if (!o) {
      t->failed = 1;
      return;
    }
    t->scratch = o;
    t->scratchcap = cap;
  }
  memcpy(t->scratch + t->scratch_n, p, len);
  t->scratch_n = need;
}

/* the node of (parent, frame), created (and its member written) when new */
static int node_of(asc_stacktree *t, uint32_t parent, const char *s, size_t len, uint32_t *id_out) {
  uint64_t h = hash_of(parent, s, len);
  size_t j = (size_t)h & (t->cap - 1);
  while (t->slots[j].node) {
    if (t->slots[j].hash == h) {
      const node *nd = &t->nodes_[t->slots[j].node - 1];
      const char *text = nd->plain ? t->out + nd->at : t->scratch + nd->at;
      if (nd->parent == parent && nd->len == len && memcmp(text, s, len) == 0) {
        *id_out = t->slots[j].node;
        return 0;
      }
    }
    j = (j + 1) & (t->cap - 1);
  }
  if (t->nodes == UINT32_MAX || len > UINT32_MAX) return -1;
  if (t->nodes == t->nodecap) {
    size_t cap;
    if (asc_size_mul(t->nodecap ? t->nodecap : 1024, 2, &cap)) return -1;
    node *nn = asc_realloc_array(t->nodes_, cap, sizeof *nn);
    if (!nn) return -1;
    t->nodes_ = nn;
    t->nodecap = cap;
  }
  uint32_t id = t->nodes + 1;
  char num[48];
  int k = snprintf(num, sizeof num, "%s\"%u\":{\"name\":\"", id > 1 ? ",\n" : "", (unsigned)id);
  put(t, num, (size_t)k);
  node nd = {t->n, (uint32_t)len, parent, asc_json_plain(s, len)};
  if (nd.plain) {
    put(t, s, len);
  } else {
    nd.at = t->scratch_n;
    put_scratch(t, s, len);
    asc_json_escape(s, len, put, t);
  }
  k = parent ? snprintf(num, sizeof num, "\",\"parent\":\"%u\"}", (unsigned)parent)
             : snprintf(num, sizeof num, "\"}");
  put(t, num, (size_t)k);
  if (t->failed) return -1;
  t->nodes = id;
  t->nodes_[id - 1] = nd;
  t->slots[j].hash = h;
  t->slots[j].node = id;
  t->used++;
  *id_out = id;
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
