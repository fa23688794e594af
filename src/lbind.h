/* Shared pieces of the Lua bindings: the column and string-table handle types. */
#ifndef ASCOPE_LBIND_H
#define ASCOPE_LBIND_H

#include <lauxlib.h>
#include <lua.h>
#include <stdint.h>

#include "ascope/column.h"
#include "ascope/error.h"
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
/* int64 values from a column or a Lua sequence; *owned tells whether to free() the result. */
int64_t *lasc_toint64s(lua_State *L, int idx, size_t *n, int *owned);
/* nil, message; returns 2. */
int lasc_pusherror(lua_State *L, const asc_error *err);
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
