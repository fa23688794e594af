/* String interning: every distinct string is stored once and named by a 32-bit id.
 * Id 0 is reserved for "no value". Ids from one table are comparable across every column that
 * interned through it, which is what lets a CSV's names be matched against a trace's.
 *
 * A table keeps at most its memory (16 MiB unless the environment's ASCOPE_STRING_MEMORY says
 * another number of MiB, or asc_strtab_set_memory) of text in memory; the text past that goes
 * to a nameless file in $TMPDIR (else /tmp) and is read back on demand. A table is for one
 * thread at a time, readers included: reading back fills the table's windows. */
#ifndef ASCOPE_STRTAB_H
#define ASCOPE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct asc_strtab asc_strtab;

asc_strtab *asc_strtab_new(void);
void asc_strtab_free(asc_strtab *t);
/* 0 on success with *id set (never 0), -1 when out of memory (or the table was drained). */
int asc_strtab_intern(asc_strtab *t, const char *s, size_t n, uint32_t *id);
/* NULL for id 0 or an unknown id. The text is NUL-terminated. Text in memory stays where it is
 * while its chunk is in memory: interning more strings does not move it, and a string may be
 * interned from the table's own text. Only the chunk being filled may still leave memory, once
 * a string needs the next chunk past the table's memory (asc_strtab_resident then turns
 * false). Text read back from the file is good until ASC_STRTAB_WINDOWS - 1 more strings have
 * been read back. A caller that holds text through more reads or interning of the same table
 * copies it (the stack tree does). A read back that fails stops the process with its reason
 * (exit status 70): no string is ever lost. */
#define ASC_STRTAB_WINDOWS 8
const char *asc_strtab_get(const asc_strtab *t, uint32_t id, size_t *n);
/* Is string id's text in memory (or id 0 or unknown)? */
int asc_strtab_resident(const asc_strtab *t, uint32_t id);
/* 1 with *n the length of string id, without reading its text back; 0 for id 0, an unknown id
 * or a drained table (where asc_strtab_get gives NULL). */
int asc_strtab_length(const asc_strtab *t, uint32_t id, size_t *n);
/* The bytes of text the table keeps in memory from now on (0: every chunk that fills). */
void asc_strtab_set_memory(asc_strtab *t, size_t bytes);
/* That number of bytes. */
size_t asc_strtab_memory(const asc_strtab *t);
uint32_t asc_strtab_count(const asc_strtab *t);
/* The table's memory: text in memory, the windows it reads text back into, and its index. */
size_t asc_strtab_bytes(const asc_strtab *t);
/* Every string of `from` interned into `to` in id order, map[id] its id there (map holds
 * count(from) + 1; map[0] = 0). `from`'s text is freed as it is passed, so the two tables
 * together never hold much more than one copy of it; `from` is left empty (ids unknown, no
 * interning) and still has to be freed. 0, or -1 when out of memory. */
int asc_strtab_drain(asc_strtab *to, asc_strtab *from, uint32_t *map);
/* asc_strtab_drain with the map made here: the map (free() it), or NULL when out of memory. */
uint32_t *asc_strtab_drain_map(asc_strtab *to, asc_strtab *from);

#endif
