/* Call stacks as a tree of interned frames (see ascope/stacktree.h).
 *
 * A stack that meets a frame the tree lacks makes that frame and every frame below it at once:
 * consecutive ids, each the parent of the next. Such a run is a segment. Only a segment's head
 * (its frame nearest the root) is looked up by hash; the frames after it are found by comparing
 * the next frame of the stack being added with the next frame of the segment. So the hash
 * table holds one slot a segment, not one a frame: a million distinct stacks of eight frames
 * are a million segments and 8 million frames, not 8 million hashed nodes.
 *
 * A frame costs the tree nothing of its own. A segment's frames are the innermost frames of the
 * stack that made it, up to its head: the text from the stack's start to the head's end splits
 * into exactly those frames again (the split of a stack's start is the start of its split), and
 * the segment keeps only where that text is and where its head starts. Walking a segment or
 * writing it splits that text once; where each frame was would have cost 8 bytes a frame, 13 MB
 * of a 150 MB trace whose every operator has a call stack of its own. */
#include "ascope/stacktree.h"
#include "ascope/checked.h"
#include "ascope/decimal.h"
#include "ascope/hash.h"
#include "ascope/json_escape.h"
#include "ascope/label.h"

#include <stdlib.h>
#include <string.h>

typedef struct {   /* frames first .. (the next segment's first) - 1 */
  uint32_t str;    /* the string of the table the frames' text is in; 0: the tree's own text */
  uint32_t first;  /* id of the head */
  uint32_t parent; /* the head's parent, 0 for a root */
  uint32_t hash;   /* of the head's parent and text */
  uint32_t at;     /* the segment's text, [at, end) of the string (or of the tree's own text), */
  uint32_t head;   /* splits into its frames, innermost first; the last, the head, starts here */
  uint32_t end;
} segment;

typedef struct {
  size_t at, len;
} piece;

typedef struct { /* the frames of a text, innermost first */
  piece *p;
  size_t n, cap;
} pieces;

struct asc_stacktree {
  uint32_t nodes;
  segment *segs; /* in id order */
  size_t nsegs, segcap;
  const asc_strtab *st; /* the table interned stacks come from (NULL until the first) */
  char *own;            /* the text of frames added as plain strings (kept below 4 GiB) */
  size_t own_n, owncap;
  uint32_t *slots; /* segment index + 1 by its hash, 0: empty */
  size_t cap;      /* a power of two */
  pieces stack;    /* the frames of the stack being added */
  pieces seg;      /* the frames of a segment's text, as it is walked or written */
  size_t seg_of;   /* which: segment index + 1, 0: none yet (a segment never changes) */
  char *copy;      /* a stack read back from the table's file, held while its frames are looked up */
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
  free(t->segs);
  free(t->own);
  free(t->slots);
  free(t->stack.p);
  free(t->seg.p);
  free(t->copy);
  free(t);
}

/* the text segment g's frames are in; good until the table reads back another string
 * (ASC_STRTAB_WINDOWS of them) or the tree's own text grows */
static const char *text_of(const asc_stacktree *t, const segment *g) {
  if (!g->str) return t->own;
  return asc_strtab_get(t->st, g->str, NULL);
}

/* one past the last id of segment k */
static uint32_t end_of(const asc_stacktree *t, size_t k) {
  return k + 1 < t->nsegs ? t->segs[k + 1].first : t->nodes + 1;
}

/* The slots twice as many, filled again from the segments (which hold their hashes): the old
 * slots are freed first, so growing never holds two sets of them. */
static int grow_slots(asc_stacktree *t) {
  size_t cap;
  if (asc_size_mul(t->cap, 2, &cap)) return -1;
  free(t->slots);
  t->slots = calloc(cap, sizeof *t->slots);
  t->cap = t->slots ? cap : 0;
  if (!t->slots) return -1; /* the tree takes no more frames (head_of checks) */
  for (size_t k = 0; k < t->nsegs; k++) {
    size_t j = (size_t)t->segs[k].hash & (cap - 1);
    while (t->slots[j]) j = (j + 1) & (cap - 1);
    t->slots[j] = (uint32_t)k + 1;
  }
  return 0;
}

/* the segment whose head is frame s[0, len) under parent, or SIZE_MAX; *slot: where a new one goes */
static size_t head_of(const asc_stacktree *t, uint32_t parent, uint32_t h, const char *s, size_t len,
                      size_t *slot) {
  size_t j = (size_t)h & (t->cap - 1);
  for (uint32_t cur; (cur = t->slots[j]) != 0; j = (j + 1) & (t->cap - 1)) {
    const segment *g = &t->segs[cur - 1];
    if (g->hash == h && g->parent == parent && g->end - g->head == len) {
      const char *text = text_of(t, g);
      if (text && memcmp(text + g->head, s, len) == 0) return cur - 1;
    }
  }
  *slot = j;
  return SIZE_MAX;
}

/* a copy of s[0, n) at the end of the tree's own text; its offset in *at */
static int keep_text(asc_stacktree *t, const char *s, size_t n, size_t *at) {
  size_t need;
  if (asc_size_add(t->own_n, n, &need) || need > UINT32_MAX) return -1;
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

/* A new segment under parent: the frames stack.p[k], stack.p[k - 1], ..., stack.p[0] of s
 * (string str of the table, whose start up to the end of frame k is the segment's text; or 0:
 * the frames are copied to the tree's own text, innermost first, a NUL after each but the
 * last), the first at hash slot `slot`. */
static int add_segment(asc_stacktree *t, uint32_t parent, uint32_t h, size_t slot, const char *s,
                       uint32_t str, size_t k) {
  size_t count = k + 1, nodes, cap;
  if (asc_size_add(t->nodes, count, &nodes) || nodes > UINT32_MAX) return -1;
  if (t->nsegs == t->segcap) {
    if (asc_size_mul(t->segcap ? t->segcap : 256, 2, &cap)) return -1;
    segment *g = asc_realloc_array(t->segs, cap, sizeof *g);
    if (!g) return -1;
    t->segs = g;
    t->segcap = cap;
  }
  const piece *head = &t->stack.p[k];
  size_t at = 0, head_at = head->at, end = head->at + head->len;
  if (!str) {
    at = t->own_n;
    for (size_t i = 0; i <= k; i++) {
      const piece *p = &t->stack.p[i];
      if (i && keep_text(t, "", 1, &head_at)) return -1; /* the NUL between two frames */
      if (keep_text(t, s + p->at, p->len, &head_at)) return -1;
    }
    end = t->own_n;
  }
  if (end > UINT32_MAX) return -1;
  uint32_t first = t->nodes + 1;
  t->segs[t->nsegs] = (segment){str, first, parent, h, (uint32_t)at, (uint32_t)head_at, (uint32_t)end};
  t->slots[slot] = (uint32_t)++t->nsegs;
  t->nodes = (uint32_t)nodes;
  if (t->nsegs * 2 > t->cap) return grow_slots(t);
  return 0;
}

static int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static int add_piece(pieces *out, const char *s, size_t at, size_t end) {
  while (at < end && is_space(s[at])) at++;
  while (end > at && is_space(s[end - 1])) end--;
  if (at == end) return 0;
  if (out->n == out->cap) {
    size_t cap;
    if (asc_size_mul(out->cap ? out->cap : 8, 2, &cap)) return -1;
    piece *p = asc_realloc_array(out->p, cap, sizeof *p);
    if (!p) return -1;
    out->p = p;
    out->cap = cap;
  }
  out->p[out->n++] = (piece){at, end - at};
  return 0;
}

/* the frames of s[0, n), innermost first, into out */
static int split_frames(pieces *out, const char *s, size_t n) {
  out->n = 0;
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
      if (add_piece(out, s, start, i)) return -1;
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
  return add_piece(out, s, start, n);
}

/* Segment k's frames into t->seg, text the text it is in (text_of): 0, or -1 when memory is
 * short or the text does not split into the segment's frames (it always does). */
static int split_segment(asc_stacktree *t, size_t k, const char *text) {
  /* stacks that branch off near the root enter the same long segment one after another: it is
   * split once, not once a stack (500 frames deep, a million stacks: 4.5 s, else 0.2 s) */
  if (t->seg_of == k + 1) return 0;
  const segment *g = &t->segs[k];
  t->seg_of = 0;
  if (split_frames(&t->seg, text + g->at, g->end - g->at)) return -1;
  if (t->seg.n != end_of(t, k) - g->first) return -1;
  t->seg_of = k + 1;
  return 0;
}

/* where frame `id` of segment k is in its text, once split_segment has split it */
static const piece *frame_of(const asc_stacktree *t, size_t k, uint32_t id) {
  return &t->seg.p[end_of(t, k) - 1 - id];
}

/* the frames of s[0, n), root first into the tree; str: s is string `str` of the table */
static int add_frames(asc_stacktree *t, const char *s, size_t n, uint32_t str, uint32_t *leaf) {
  if (split_frames(&t->stack, s, n)) return -1;
  uint32_t node = 0;     /* the frame reached, 0: above the roots */
  size_t seg = SIZE_MAX; /* its segment, split into t->seg */
  const char *text = NULL;
  for (size_t k = t->stack.n; k-- > 0;) {
    const piece *p = &t->stack.p[k];
    if (seg != SIZE_MAX && node + 1 < end_of(t, seg)) { /* the segment goes on: is it this frame? */
      const piece *f = frame_of(t, seg, node + 1);
      if (f->len == p->len && memcmp(text + t->segs[seg].at + f->at, s + p->at, p->len) == 0) {
        node++;
        continue;
      }
    }
    if (!t->slots) return -1; /* out of memory when they last grew */
    uint32_t h = asc_hash_under(node, s + p->at, p->len);
    size_t slot = 0;
    seg = head_of(t, node, h, s + p->at, p->len, &slot);
    if (seg == SIZE_MAX) { /* a frame the tree lacks: it and every frame below it are new */
      if (add_segment(t, node, h, slot, s, str, k)) return -1;
      *leaf = t->nodes;
      return 0;
    }
    node = t->segs[seg].first;
    text = text_of(t, &t->segs[seg]);
    if (!text || split_segment(t, seg, text)) return -1;
  }
  *leaf = node;
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

int asc_stacktree_write(asc_stacktree *t, size_t label_max, void (*put)(void *ud, const char *p, size_t n),
                        void *ud) {
#define PUT_LIT(lit) put(ud, lit, sizeof lit - 1)
  char num[32];
  for (size_t k = 0; k < t->nsegs; k++) {
    const segment *g = &t->segs[k];
    const char *text = text_of(t, g); /* one read back a segment, held while its frames are written */
    if (text && split_segment(t, k, text)) return -1;
    for (uint32_t id = g->first, end = end_of(t, k); id < end; id++) {
      uint32_t parent = id == g->first ? g->parent : id - 1;
      if (id > 1) PUT_LIT(",\n");
      PUT_LIT("\"");
      put(ud, num, asc_format_int(id, num));
      PUT_LIT("\":{\"name\":\"");
      const piece *f = text ? frame_of(t, k, id) : NULL;
      const char *s = f ? text + g->at + f->at : "";
      size_t len = f ? f->len : 0, keep = asc_label_cut(s, len, label_max);
      asc_json_escape(s, keep, put, ud);
      if (keep < len) put(ud, ASC_LABEL_MORE, sizeof ASC_LABEL_MORE - 1);
      if (parent) {
        PUT_LIT("\",\"parent\":\"");
        put(ud, num, asc_format_int(parent, num));
      }
      PUT_LIT("\"}");
    }
  }
  return 0;
#undef PUT_LIT
}
