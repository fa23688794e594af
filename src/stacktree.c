/* Call stacks as a tree of interned frames (see ascope/stacktree.h). */
#include "ascope/stacktree.h"
#include "ascope/checked.h"
#include "ascope/decimal.h"
#include "ascope/hash.h"
#include "ascope/json_escape.h"
#include "ascope/label.h"

#include <stdlib.h>
#include <string.h>

typedef struct { /* 20 bytes: a million distinct stacks make millions of frames */
  uint32_t at;   /* where the frame's text starts: in string `str` of the table, or in the */
  uint32_t str;  /* tree's own text when str is 0 (kept below 4 GiB) */
  uint32_t len, parent;
  uint32_t hash; /* of the path from the root to this frame */
} node;

typedef struct {
  size_t at, len;
  uint32_t hash; /* of the path from the root to this frame */
} piece;

struct asc_stacktree {
  node *nodes_; /* by id - 1 */
  size_t nodecap;
  uint32_t nodes;
  const asc_strtab *st; /* the table interned stacks come from (NULL until the first) */
  char *own;            /* the text of frames added as plain strings */
  size_t own_n, owncap;
  uint32_t *slots;  /* node ids by hash, 0: empty; the hashes are the nodes' */
  size_t cap, used; /* cap: a power of two */
  piece *pieces;    /* the frames of the stack being added */
  size_t npieces, piececap;
  char *copy; /* a stack read back from the table's file, held while its frames are looked up */
  size_t copycap;
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
  free(t->own);
  free(t->slots);
  free(t->pieces);
  free(t->copy);
  free(t);
}

/* A frame's hash covers its path from the root (the hash of its parent's path and its text),
 * not its parent's id: the hashes of a whole stack are known before any lookup, so the slots
 * of its frames are fetched from memory together rather than one miss after another. */
static uint32_t hash_of(uint32_t parent_hash, const char *s, size_t n) {
  uint64_t h = asc_hash_bytes(0x9E3779B97F4A7C15ULL ^ ((uint64_t)parent_hash << 32) ^ n, s, n);
  return (uint32_t)(h ^ (h >> 32));
}

static const char *text_of(const asc_stacktree *t, const node *nd) {
  if (!nd->str) return t->own + nd->at;
  const char *s = asc_strtab_get(t->st, nd->str, NULL);
  return s ? s + nd->at : "";
}

/* The slots twice as many, filled again from the nodes (which hold their hashes): the old
 * slots are freed first, so growing never holds two sets of them. */
static int grow_slots(asc_stacktree *t) {
  size_t cap;
  if (asc_size_mul(t->cap, 2, &cap)) return -1;
  free(t->slots);
  t->slots = calloc(cap, sizeof *t->slots);
  t->cap = t->slots ? cap : 0;
  if (!t->slots) return -1; /* the tree takes no more frames (node_of checks) */
  for (uint32_t id = 1; id <= t->nodes; id++) {
    size_t j = (size_t)t->nodes_[id - 1].hash & (cap - 1);
    while (t->slots[j]) j = (j + 1) & (cap - 1);
    t->slots[j] = id;
  }
  return 0;
}

/* a copy of s[0, n) at the end of the tree's own text; its offset in *at */
static int keep_text(asc_stacktree *t, const char *s, size_t n, size_t *at) {
  size_t need;
  if (asc_size_add(t->own_n, n, &need)) return -1;
  if (need > t->owncap) {
    size_t cap;
    if (asc_size_mul(need, 2, &cap)) return -1;
    char *o = realloc(t->own, cap);
    if (!o) return -1;
    t->own = o;
    t->owncap = cap;
  }
  memcpy(t->own + t->own_n, s, n);
  *at = t->own_n;
  t->own_n = need;
  return 0;
}

/* the node of (parent, frame s[0, len)), created when new: the frame is at `at` of string
 * `str` of the table, or (str 0) copied into the tree's own text */
static int node_of(asc_stacktree *t, uint32_t parent, uint32_t h, const char *s, size_t len, uint32_t str,
                   size_t at, uint32_t *id_out) {
  if (!t->slots) return -1;
  size_t j = (size_t)h & (t->cap - 1);
  for (uint32_t cur; (cur = t->slots[j]) != 0; j = (j + 1) & (t->cap - 1)) {
    const node *nd = &t->nodes_[cur - 1];
    if (nd->hash == h && nd->parent == parent && nd->len == len && memcmp(text_of(t, nd), s, len) == 0) {
      *id_out = cur;
      return 0;
    }
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
  if (!str && (t->own_n > UINT32_MAX || keep_text(t, s, len, &at))) return -1;
  uint32_t id = t->nodes + 1;
  t->nodes_[id - 1] = (node){(uint32_t)at, str, (uint32_t)len, parent, h};
  t->nodes = id;
  t->slots[j] = id;
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
  t->pieces[t->npieces++] = (piece){at, end - at, 0};
  return 0;
}

/* the frames of s[0, n), root first into the tree; str: s is string `str` of the table */
static int add_frames(asc_stacktree *t, const char *s, size_t n, uint32_t str, uint32_t *leaf) {
  t->npieces = 0;
  size_t start = 0, i = 0;
  const char *nul = memchr(s, '\0', n); /* NUL separates too; a stack rarely has one */
  size_t next_nul = nul ? (size_t)(nul - s) : n;
  while (i < n) {
    const char *semi = memchr(s + i, ';', next_nul - i);
    i = semi ? (size_t)(semi - s) : next_nul;
    if (i == n) break;
    size_t sep = 0;
    if (s[i] == '\0')
      sep = 1;
    else if (i + 1 < n && s[i + 1] == '\n')
      sep = 2;
    else if (i + 2 < n && s[i + 1] == '\r' && s[i + 2] == '\n')
      sep = 3;
    if (sep) {
      if (add_piece(t, s, start, i)) return -1;
      i += sep;
      start = i;
    } else {
      i++;
    }
    if (i > next_nul) {
      nul = memchr(s + i, '\0', n - i);
      next_nul = nul ? (size_t)(nul - s) : n;
    }
  }
  if (add_piece(t, s, start, n)) return -1;
  uint32_t h = 0;
  for (size_t k = t->npieces; k-- > 0;) {
    piece *p = &t->pieces[k];
    p->hash = h = hash_of(h, s + p->at, p->len);
    if (t->slots) __builtin_prefetch(&t->slots[(size_t)h & (t->cap - 1)]);
  }
  uint32_t parent = 0;
  for (size_t k = t->npieces; k-- > 0;) {
    const piece *p = &t->pieces[k];
    if (node_of(t, parent, p->hash, s + p->at, p->len, str, p->at, &parent)) return -1;
  }
  *leaf = parent;
  return 0;
}

int asc_stacktree_add(asc_stacktree *t, const char *s, size_t n, uint32_t *leaf) {
  return add_frames(t, s, n, 0, leaf);
}

int asc_stacktree_add_interned(asc_stacktree *t, const asc_strtab *st, uint32_t id, uint32_t *leaf) {
  if (t->st && t->st != st) return -1;
  t->st = st;
  size_t n;
  const char *s = asc_strtab_get(st, id, &n);
  if (!s) {
    *leaf = 0;
    return 0;
  }
  if (!asc_strtab_resident(st, id)) { /* the lookups read the table too, which would reuse its window */
    if (n + 1 > t->copycap) {
      char *c = realloc(t->copy, n + 1);
      if (!c) return -1;
      t->copy = c;
      t->copycap = n + 1;
    }
    memcpy(t->copy, s, n);
    s = t->copy;
  }
  return add_frames(t, s, n, id, leaf);
}

void asc_stacktree_write(const asc_stacktree *t, size_t label_max,
                         void (*put)(void *ud, const char *p, size_t n), void *ud) {
#define PUT_LIT(lit) put(ud, lit, sizeof lit - 1)
  char num[32];
  for (uint32_t id = 1; id <= t->nodes; id++) {
    const node *nd = &t->nodes_[id - 1];
    if (id > 1) PUT_LIT(",\n");
    PUT_LIT("\"");
    put(ud, num, asc_format_int(id, num));
    PUT_LIT("\":{\"name\":\"");
    const char *s = text_of(t, nd);
    size_t keep = asc_label_cut(s, nd->len, label_max);
    asc_json_escape(s, keep, put, ud);
    if (keep < nd->len) put(ud, ASC_LABEL_MORE, sizeof ASC_LABEL_MORE - 1);
    if (nd->parent) {
      PUT_LIT("\",\"parent\":\"");
      put(ud, num, asc_format_int(nd->parent, num));
    }
    PUT_LIT("\"}");
  }
#undef PUT_LIT
}
