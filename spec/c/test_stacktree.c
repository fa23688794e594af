/* Stacks from a table whose text was spilled to its file: the tree finds each frame's node by
 * reading the text of the stack that made it, one read back after another, while it holds the
 * stack it is adding; the stack's own text must not be lost to those reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/stacktree.h"
#include "ascope/strtab.h"
#include "ctest.h"

enum { DEPTH = 3 * ASC_STRTAB_WINDOWS, PAD = 40000 };

/* the stack whose path from the root is frames 1..depth: "frame_depth;\r\n...;\r\nframe_1" */
static size_t stack_of(int depth, char *buf) {
  size_t n = 0;
  for (int k = depth; k >= 1; k--)
    n += (size_t)sprintf(buf + n, "%s/src/module.py(%d): frame_%d", k == depth ? "" : ";\r\n", k, k);
  return n;
}

static void spilled_stacks(void) {
  asc_strtab *st = asc_strtab_new();
  asc_stacktree *t = asc_stacktree_new();
  CHECK(st && t);
  if (!st || !t) return;
  asc_strtab_set_memory(st, 0);
  char *buf = malloc(PAD + 1);
  CHECK(buf != NULL);
  if (!buf) return;
  uint32_t ids[DEPTH + 1], pad, leaf[DEPTH + 1];
  /* stack d (made by the tree after stack d - 1) first holds the node at depth d; a string of
   * PAD bytes between two stacks puts each in a read-back window of its own */
  for (int d = 1; d <= DEPTH; d++) {
    CHECK(asc_strtab_intern(st, buf, stack_of(d, buf), &ids[d]) == 0);
    memset(buf, 'a' + d % 26, PAD);
    CHECK(asc_strtab_intern(st, buf, PAD, &pad) == 0);
  }
  for (int d = 1; d <= DEPTH; d++) CHECK(asc_stacktree_add_interned(t, st, ids[d], &leaf[d]) == 0);
  /* the deepest stack again, as another string (white space around a frame is not its text):
   * each of its frames is found through a different stack's text */
  size_t n = stack_of(DEPTH, buf);
  buf[n++] = ' ';
  uint32_t again_id, again;
  CHECK(asc_strtab_intern(st, buf, n, &again_id) == 0);
  for (int k = 0; k < 100 && asc_strtab_resident(st, again_id); k++) { /* its chunk full, and spilled */
    memset(buf, 'A' + k % 26, PAD);
    buf[0] = (char)k;
    CHECK(asc_strtab_intern(st, buf, PAD, &pad) == 0);
  }
  CHECK(!asc_strtab_resident(st, again_id));
  CHECK(asc_stacktree_add_interned(t, st, again_id, &again) == 0);
  CHECK(again == leaf[DEPTH]);
  CHECK(leaf[DEPTH] == DEPTH); /* one node a depth: no stack made a second */
  free(buf);
  asc_stacktree_free(t);
  asc_strtab_free(st);
}

int main(void) {
  spilled_stacks();
  CTEST_END();
}
