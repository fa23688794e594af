/* JSON string input: the one decoder of string content that json.scan keeps. \uXXXX becomes
 * UTF-8 (a surrogate pair one character; a lone surrogate its own three bytes), the other
 * escapes their byte. The content is taken as the scan has checked it, but any bytes are safe:
 * a backslash at the very end stays as it is, a cut \u becomes "?". */
#ifndef ASCOPE_JSON_UNESCAPE_H
#define ASCOPE_JSON_UNESCAPE_H

#include <stddef.h>

/* The decoded bytes of s[0, n) into o (room for n bytes: decoding never grows); their count. */
size_t asc_json_unescape(const char *s, size_t n, char *o);

/* 1 when s[0, n) decodes to exactly d[0, dn), found without decoding it anywhere: the plain runs
 * between backslashes are compared in place, each escape decoded on its own. */
int asc_json_escaped_equal(const char *s, size_t n, const char *d, size_t dn);

#endif
