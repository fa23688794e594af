/* Labels in reports (a table cell, a chart bar, a frame name in a trace viewer) are capped in
 * bytes: one call stack without separators can be a 100 MB "frame", and a report shows its
 * start, cut on a UTF-8 character boundary and ended with "…" (ascope.fmt.label in Lua). */
#ifndef ASCOPE_LABEL_H
#define ASCOPE_LABEL_H
#include <stddef.h>

#define ASC_LABEL_MORE "\xe2\x80\xa6" /* "…", after a label that was cut */

/* How many bytes of s[0, n) a label of at most max bytes keeps: n when it fits, else max or
 * up to three less, so that no UTF-8 character is cut in two (text that is not UTF-8 is cut at
 * max); the caller then adds ASC_LABEL_MORE. */
size_t asc_label_cut(const char *s, size_t n, size_t max);
#endif
