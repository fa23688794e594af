/* Call stacks as a tree of frames, each distinct (parent, frame) pair named once by an id, as
 * the Chrome trace format's "stackFrames" wants them. A stack is split into frames at ";\r\n",
 * ";\n" and NUL, each frame trimmed of white space, empty frames dropped; its last frame is the
 * root. Ids are given in creation order. A frame's text is not copied when its stack comes from
 * a string table (asc_stacktree_add_interned): the tree keeps where it is, so a million
 * distinct stacks cost the tree a few words a stack, not their text again, and the members are
 * written straight to the output at the end. */
#ifndef ASCOPE_STACKTREE_H
#define ASCOPE_STACKTREE_H
#include <stddef.h>
#include <stdint.h>

#include "ascope/strtab.h"

typedef struct asc_stacktree asc_stacktree;
asc_stacktree *asc_stacktree_new(void);
void asc_stacktree_free(asc_stacktree *t);
/* 0 with *leaf set to the id of the stack's first (innermost) frame, 0 for a stack without
 * frames; -1 when out of memory or out of ids. The frames' text is copied. */
int asc_stacktree_add(asc_stacktree *t, const char *s, size_t n, uint32_t *leaf);
/* The same for string `id` of st (id 0 or unknown: no frames). The frames' text stays in st,
 * which must outlive the tree and be the table of every call: -1 also for another table. */
int asc_stacktree_add_interned(asc_stacktree *t, const asc_strtab *st, uint32_t id, uint32_t *leaf);
/* The members of every frame, "<id>":{"name":"...","parent":"<id>"} separated by ",\n" (no
 * braces), handed to put in pieces. A name longer than label_max bytes is cut as a report label
 * (ascope/label.h); SIZE_MAX keeps every name whole. 0, or -1 when memory is short (each
 * segment's frames are found again in its text, which takes room for as many as it has). */
int asc_stacktree_write(asc_stacktree *t, size_t label_max, void (*put)(void *ud, const char *p, size_t n),
                        void *ud);
#endif
