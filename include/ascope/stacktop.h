/* The top (innermost) frame of a Python call stack as the profiler writes it: the text before
 * the first ";\r\n" (or, when there is none, before the first ";\n"), without the white space
 * around it. A stack without a separator is its own top frame. */
#ifndef ASCOPE_STACKTOP_H
#define ASCOPE_STACKTOP_H
#include <stddef.h>

/* The top frame of s[0, n) as s[*at, *at + *len) (len 0 for an empty or blank frame). */
void asc_stack_top(const char *s, size_t n, size_t *at, size_t *len);
#endif
