/* The plog classifier: (1) the linear Lua-pattern matcher against Lua's own string.find, with
 * the input's first line as the pattern and the rest as the subject: wherever asc_lpat accepts
 * a pattern, the match and its first capture must be the ones Lua gives; (2) the whole input
 * scanned as a log file by a classifier shaped like plog's (header, strips, word and sequence
 * rules, fields). fuzz_logclass_threads scans it on several threads.
 * Crashes, hangs and memory errors are caught by libFuzzer and the sanitizers. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <string.h>

#include "ascope/logclass.h"
#include "ascope/lpat.h"
#include "fuzz_common.h"

#define PATTERN_MAX 64

static lua_State *lua_for_find(void) {
  static lua_State *L;
  if (!L) {
    L = luaL_newstate();
    if (!L) abort();
    luaL_openlibs(L);
  }
  return L;
}

/* string.find(s, p): 1 and the match (1-based start, end, first capture) or 0 for none; -1 when
 * Lua raises (a malformed pattern, or one too complex for its recursion limit) */
static int lua_find(const char *p, size_t pn, const char *s, size_t sn, size_t *start, size_t *end,
                    const char **cap, size_t *cap_len) {
  lua_State *L = lua_for_find();
  lua_settop(L, 0);
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "find");
  lua_pushlstring(L, s, sn);
  lua_pushlstring(L, p, pn);
  if (lua_pcall(L, 2, LUA_MULTRET, 0) != LUA_OK) return -1;
  int n = lua_gettop(L) - 1; /* the string table stays below the results */
  if (n < 1 || lua_isnil(L, 2)) return 0;
  *start = (size_t)lua_tointeger(L, 2);
  *end = (size_t)lua_tointeger(L, 3);
  *cap = NULL;
  *cap_len = 0;
  if (n >= 3 && lua_type(L, 4) == LUA_TSTRING) *cap = lua_tolstring(L, 4, cap_len);
  return 1;
}

static void differential(const uint8_t *data, size_t size) {
  size_t pn = 0;
  while (pn < size && pn < PATTERN_MAX && data[pn] != '\n') pn++;
  if (pn == size || data[pn] != '\n') return;
  const char *p = (const char *)data, *s = (const char *)data + pn + 1;
  size_t sn = size - pn - 1;
  if (memchr(p, '\0', pn)) return; /* asc_lpat takes the pattern as text */
  const char *why = NULL;
  asc_lpat *lp = asc_lpat_compile(p, pn, 0, &why);
  if (!lp) return; /* outside the subset: plog hands it to Lua itself */
  asc_lpat_match m;
  int got = asc_lpat_find(lp, s, sn, 0, &m);
  size_t ls, le, cap_len;
  const char *cap;
  int want = lua_find(p, pn, s, sn, &ls, &le, &cap, &cap_len);
  if (want >= 0) {
    if (got != want) {
      fprintf(stderr, "asc_lpat %s where string.find %s\n", got ? "matched" : "found nothing",
              want ? "matched" : "found nothing");
      abort();
    }
    if (got) {
      if (m.start + 1 != ls || m.end != le) {
        fprintf(stderr, "asc_lpat matched [%zu, %zu], string.find [%zu, %zu]\n", m.start + 1, m.end, ls, le);
        abort();
      }
      /* a capture Lua gives as a string: asc_lpat's first capture must hold the same bytes */
      if (cap && (m.cap_end - m.cap_start != cap_len || memcmp(s + m.cap_start, cap, cap_len) != 0)) {
        fprintf(stderr, "asc_lpat's first capture differs from string.find's\n");
        abort();
      }
    }
  }
  asc_lpat_free(lp);
}

static int on_line(void *ud, const asc_logclass_line *line) {
  (void)ud;
  if (line->len > ASC_LOGCLASS_LINE_MAX) abort();
  return 0;
}

/* the patterns outside the linear subset: plog gives them to Lua; here they match nothing */
static int no_match(void *ud, size_t pattern, const char *s, size_t n, size_t init, asc_logclass_hit *hit,
                    asc_error *err) {
  (void)ud, (void)pattern, (void)s, (void)n, (void)init, (void)hit, (void)err;
  return 0;
}

static void scan(const uint8_t *data, size_t size) {
  static asc_logclass *lc;
  if (!lc) {
    static const char *const literals[] = {"[ERROR]", "ras_code="};
    static const char *const strips[] = {"^%[([^%]]*)%]%s*(.*)$", "^%[?(%d+)%]?%s*(.*)$"};
    static const char *const codes[] = {"E%d%d%d%d%d", "EZ%d%d%d%d"};
    static const char *const words[] = {"aicore", "timeout"};
    static const char *const seq[] = {"Error happened", "origin_op_name"};
    static const char *const ge[] = {"GE"};
    static const char *const slow[] = {"topo.-timeout"};
    static const asc_logclass_rule rules[] = {{ASC_LC_WORD, 0, codes, 2, NULL, 0},
                                              {ASC_LC_ANY, 1, words, 2, ge, 1},
                                              {ASC_LC_SEQUENCE, 0, seq, 2, NULL, 0},
                                              {ASC_LC_ANY, 0, slow, 1, NULL, 0}};
    static const char *const task[] = {"task_id[=:]%s*(%d+)", "taskId=(%d+)"};
    static const char *const kernel[] = {"kernel_name[=:]%s*([%w_]+)"};
    static const asc_logclass_field fields[] = {{task, 2}, {kernel, 1}};
    asc_logclass_spec spec = {
        literals,
        2,
        "^%[(%u+)%]%s+([%w_%-]+)%((%d+),([^)]*)%):(%d%d%d%d%-%d%d%-%d%d%-[%d:%.]+)%s*(.*)$",
        1,
        2,
        5,
        6,
        strips,
        2,
        "ERROR",
        "[ERROR]",
        rules,
        4,
        fields,
        2};
    asc_error err;
    if (asc_logclass_new(&spec, &lc, &err) != 0) abort();
    asc_logclass_set_slow(lc, no_match, NULL);
  }
  const char *path = fuzz_path(data, size);
  asc_error err;
  asc_logclass_scan(lc, path, on_line, NULL, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  differential(data, size);
  scan(data, size);
  return 0;
}
