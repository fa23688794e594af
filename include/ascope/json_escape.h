/* JSON string output: the one escaper of every JSON file ascope writes. Control characters,
 * quotes and backslashes are escaped; bytes that are not valid UTF-8 (a folder name in GBK, a
 * call stack cut in the middle of a character) become U+FFFD, as Go's and jq's encoders do, so
 * every output stays valid JSON whatever the input held. */
#ifndef ASCOPE_JSON_ESCAPE_H
#define ASCOPE_JSON_ESCAPE_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s[0, n), or 0 when s does not start one. */
size_t asc_utf8_len(const unsigned char *s, size_t n);

/* 1 when s can be written between quotes as it is. */
int asc_json_plain(const char *s, size_t n);

/* The content of the JSON string for s (without the quotes), handed to put in pieces. */
void asc_json_escape(const char *s, size_t n, void (*put)(void *ud, const char *p, size_t len), void *ud);

#endif
