/* Call stacks as a tree of frames, each distinct (parent, frame) pair named once by an id, as
 * the Chrome trace format's "stackFrames" wants them. A stack is split into frames at ";\r\n",
 * ";\n" and NUL, each frame trimmed of white space, empty frames dropped; its last frame is the
 * root. The tree writes the JSON members of the frames it creates ("<id>":{"name":...,
 * "parent":"<id>"}) into one text, in creation order, so every distinct stack costs its own
 * bytes once whatever the number of rows that share it. */
#ifndef ASCOPE_STACKTREE_H
#define ASCOPE_STACKTREE_H
#include <stddef.h>
#include <stdint.h>

typedef struct asc_stacktree asc_stacktree;
asc_stacktree *asc_stacktree_new(void);
void asc_stacktree_free(asc_stacktree *t);
/* 0 with *leaf set to the id of the stack's first (innermost) frame, 0 for a stack without
 * frames; -1 when out of memory or out of ids. */
int asc_stacktree_add(asc_stacktree *t, const char *s, size_t n, uint32_t *leaf);
/* The members written so far, separated by ",\n" (no braces). */
const char *asc_stacktree_json(const asc_stacktree *t, size_t *n);
#endif
