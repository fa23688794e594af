/* Shared pieces of the Lua bindings: the column and string-table handle types. */
#ifndef ASCOPE_LBIND_H
#define ASCOPE_LBIND_H

#include <lauxlib.h>
#include <lua.h>
#include <stdint.h>

#include "ascope/column.h"
#include "ascope/error.h"
#include "ascope/idmap.h"
#include "ascope/strtab.h"

#define ASC_COLUMN_MT "ascope.column"
#define ASC_STRINGS_MT "ascope.strings"

/* The state's shared string table (created on first use); pushes its userdata. */
asc_strtab *lasc_pushstrings(lua_State *L);
asc_strtab *lasc_checkstrings(lua_State *L, int idx);
/* Push a column userdata that takes over `moved` (left empty). String columns keep a reference
 * to the string table at stack index strings_idx (or the shared one when 0). */
asc_col *lasc_pushcolumn(lua_State *L, asc_col *moved, int strings_idx);
asc_col *lasc_checkcolumn(lua_State *L, int idx);
/* The table a string column's ids refer to. */
asc_strtab *lasc_column_strings(lua_State *L, int idx);
/* int64 values from a column or a Lua sequence. Pushes one value that holds them (the column
 * itself, or a userdata with the converted copy), so an error raised later, by a bad argument
 * or a short allocation, frees them with the call's stack: never free() the result. */
int64_t *lasc_toint64s(lua_State *L, int idx, size_t *n);
/* Room for n items of size bytes in a userdata pushed on the stack, freed by Lua; raises when
 * n * size overflows or memory is short. */
void *lasc_newarray(lua_State *L, size_t n, size_t size);
/* The same, freed as soon as the calling C function returns or raises: its slot on the stack
 * is to be closed. For scratch the size of the string table or of the rows, which as garbage
 * would wait for the collector's next cycle, and the collector does not count C memory: the
 * scratch of a few calls over a million rows added up at a command's peak. The caller marks
 * no other slot to be closed below it, removes or moves nothing below it, and leaves the slot
 * on the stack until it returns (Lua 5.4.4's lua_settop over a slot to be closed is unsafe). */
void *lasc_scratch(lua_State *L, size_t n, size_t size);
/* Integers from a column or a Lua sequence, read with asc_col_int: an integer column (I64 or
 * U32) as it is, anything else converted into a new I64 column. Pushes the column it returns,
 * so the values live as long as the call's stack. Row lists are U32 columns: their readers take
 * them this way rather than as a copy. */
const asc_col *lasc_tointcol(lua_State *L, int idx);
/* err's text in the reader's language (see lerror.c), "file:line:column (byte N): message". */
void lasc_pusherrortext(lua_State *L, const asc_error *err);
/* nil, the text, the message's template (a name that does not change with the language, for
 * code that must tell one error from another); returns 3. */
int lasc_pusherror(lua_State *L, const asc_error *err);
/* Raise err's text as a Lua error. */
int lasc_raise(lua_State *L, const asc_error *err) __attribute__((noreturn));
/* Raise "out of memory". */
int lasc_oom(lua_State *L) __attribute__((noreturn));
/* A Lua progress callback fn(done, total) called from C through a protected call. An error it
 * raises stops the scan (the C side frees its file and buffers as for any error) and is raised
 * again by lasc_progress_rethrow once C has returned. Returning a string also stops the scan. */
typedef struct lasc_progress {
  lua_State *L;
  int fn, err, failed;
} lasc_progress;
/* Reads field "progress" of the table at opts; pushes two slots (the function and a place for
 * its error). Returns 1 when there is a callback to install (progress = lasc_progress_call). */
int lasc_progress_init(lua_State *L, int opts, lasc_progress *p);
int lasc_progress_call(void *ud, long long done, long long total);
/* Raises the callback's error if it raised one. */
void lasc_progress_rethrow(lasc_progress *p);
/* A map of the string ids of a column of n rows (ascope/idmap.h), pushed on the stack as
 * scratch (lasc_scratch), when the string table (nstr ids) is much larger than the column; then *slots
 * becomes n + 1 (the numbers it gives and 0). NULL, with nothing pushed and *slots left as it
 * is, when an array by id (nstr slots) is the better scratch. */
asc_idmap *lasc_push_idmap(lua_State *L, size_t nstr, size_t n, size_t *slots);
/* Push one value of a column (nil for a missing one). */
void lasc_pushcell(lua_State *L, const asc_col *c, const asc_strtab *st, size_t i);
void lasc_register_column(lua_State *L);

/* A growable byte buffer owned by a userdata (freed by __gc even when an error unwinds), for
 * building output while the Lua stack is in use. */
typedef struct lasc_buf {
  char *p;
  size_t n, cap;
} lasc_buf;
lasc_buf *lasc_newbuf(lua_State *L);
void lasc_addl(lua_State *L, lasc_buf *b, const char *s, size_t n);
void lasc_adds(lua_State *L, lasc_buf *b, const char *s);
void lasc_addc(lua_State *L, lasc_buf *b, char c);

/* The call-stack tree at idx (see ascope/stacktree.h); raises when it is not one. */
struct asc_stacktree *lasc_checkstacktree(lua_State *L, int idx);

int luaopen_ascope_core(lua_State *L);
int lasc_open_json(lua_State *L);
int lasc_open_csv(lua_State *L);
int lasc_open_interval(lua_State *L);
int lasc_open_match(lua_State *L);
int lasc_open_bin(lua_State *L);
int lasc_open_db(lua_State *L);
int lasc_open_fs(lua_State *L);
int lasc_open_par(lua_State *L);
int lasc_open_regex(lua_State *L);
int lasc_open_iconv(lua_State *L);
int lasc_open_logclass(lua_State *L);
int lasc_open_stacktree(lua_State *L);
int lasc_open_column(lua_State *L);
void lasc_json_writer_register(lua_State *L);

#endif
