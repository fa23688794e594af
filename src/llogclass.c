/* Lua binding of the log-line classifier: logclass.new(spec) -> classifier;
 * logclass.tally(opts) -> a tally that streams what scans find: counts per rule, a capped list
 * of examples per rule, the earliest error time per group, and, when asked, every (line, rule)
 * record as a CSV row written as it is found to a spool (an anonymous temporary file) that
 * tally:save(path) copies under a name. Memory does not grow with the number of lines found. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/csv.h"
#include "ascope/logclass.h"
#include "ascope/lpat.h"
#include "lbind.h"

#define CLASSIFIER_MT "ascope.logclass"
#define TALLY_MT "ascope.logclass.tally"
#define EXAMPLE_MAX 4096 /* bytes of an example's text */
#define GROUPS_MAX 65536 /* groups whose earliest error time is kept */
#define TIME_MAX 64      /* bytes of a kept time */
#define NONE INT64_MIN   /* no group */

typedef struct classifier {
  asc_logclass *lc;
  size_t nfields;
} classifier;

typedef struct example {
  int64_t line;
  uint32_t file;
  char *text;
  size_t len;
} example;

typedef struct group {
  int64_t id; /* NONE: a free slot */
  char time[TIME_MAX];
  size_t time_n;
} group;

typedef struct tally {
  size_t nslots; /* rules + 1 (the last: error lines no rule matched) */
  int64_t *counts;
  example *examples; /* nslots x max_examples */
  size_t *nexamples, max_examples;
  group *groups;
  size_t ngroups, groups_cap, groups_dropped;
  int group_field; /* field index (0-based) whose integer value is the group, -1 none */
  int *record_fields;
  size_t nrecord_fields;
  int *key_fields; /* a matched line with one of these goes to the key callback */
  size_t nkey_fields;
  asc_csv_writer *csv; /* NULL: records are counted, not written */
  char **titles;       /* per slot, the record's first cell */
  size_t *title_n;
  int *title_q; /* their quoting (asc_csv_quoting), decided once */
  char **files; /* per file number (1-based), its name */
  size_t *file_n, nfiles;
  int *file_q;
  int64_t records, cut;
  int csv_failed;
} tally;

/* ---------- classifier ---------- */

static const char **strings(lua_State *L, int t, const char *key, size_t *n) {
  lua_getfield(L, t, key);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    *n = 0;
    return lua_newuserdatauv(L, sizeof(char *), 0);
  }
  luaL_checktype(L, -1, LUA_TTABLE);
  int idx = lua_gettop(L);
  *n = lua_rawlen(L, idx);
  const char **out = lua_newuserdatauv(L, (*n + 1) * sizeof *out, 0);
  for (size_t i = 0; i < *n; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i + 1);
    out[i] = luaL_checkstring(L, -1);
    lua_pop(L, 1); /* kept alive by the spec table */
  }
  lua_remove(L, idx); /* the userdata stays on the stack until the spec is compiled */
  return out;
}

static int intfield(lua_State *L, int t, const char *key) {
  lua_getfield(L, t, key);
  int v = (int)luaL_optinteger(L, -1, 0);
  lua_pop(L, 1);
  return v;
}

static const char *strfield(lua_State *L, int t, const char *key) {
  lua_getfield(L, t, key);
  const char *s = luaL_optstring(L, -1, NULL);
  lua_pop(L, 1);
  return s;
}

/* logclass.new{literals, header, level, module, time, rest, strips, error_level, error_prefix,
 *   rules = {{mode = "any"|"word"|"sequence", any_level, patterns, modules}}, fields = {{patterns}}}
 *   -> classifier, or nil, message */
static int l_new(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int top = lua_gettop(L);
  asc_logclass_spec s;
  memset(&s, 0, sizeof s);
  s.literals = strings(L, 1, "literals", &s.nliterals);
  s.header = strfield(L, 1, "header");
  luaL_argcheck(L, s.header != NULL, 1, "header pattern missing");
  s.cap_level = intfield(L, 1, "level");
  s.cap_module = intfield(L, 1, "module");
  s.cap_time = intfield(L, 1, "time");
  s.cap_rest = intfield(L, 1, "rest");
  s.strips = strings(L, 1, "strips", &s.nstrips);
  s.error_level = strfield(L, 1, "error_level");
  s.error_prefix = strfield(L, 1, "error_prefix");
  lua_getfield(L, 1, "rules");
  luaL_checktype(L, -1, LUA_TTABLE);
  int rules = lua_gettop(L);
  s.nrules = lua_rawlen(L, rules);
  asc_logclass_rule *rs = lua_newuserdatauv(L, (s.nrules + 1) * sizeof *rs, 0);
  for (size_t i = 0; i < s.nrules; i++) {
    luaL_checkstack(L, 8, "too many rules");
    lua_rawgeti(L, rules, (lua_Integer)i + 1);
    int r = lua_gettop(L);
    luaL_checktype(L, r, LUA_TTABLE);
    const char *mode = strfield(L, r, "mode");
    rs[i].mode = mode && strcmp(mode, "word") == 0       ? ASC_LC_WORD
                 : mode && strcmp(mode, "sequence") == 0 ? ASC_LC_SEQUENCE
                                                         : ASC_LC_ANY;
    lua_getfield(L, r, "any_level");
    rs[i].any_level = lua_toboolean(L, -1);
    lua_pop(L, 1);
    rs[i].patterns = strings(L, r, "patterns", &rs[i].npatterns);
    rs[i].modules = strings(L, r, "modules", &rs[i].nmodules);
    lua_pushvalue(L, r); /* keeps the rule's string lists (userdata above it) reachable */
    lua_remove(L, r);
  }
  lua_getfield(L, 1, "fields");
  int fields = lua_gettop(L);
  s.nfields = lua_istable(L, fields) ? lua_rawlen(L, fields) : 0;
  asc_logclass_field *fs = lua_newuserdatauv(L, (s.nfields + 1) * sizeof *fs, 0);
  for (size_t i = 0; i < s.nfields; i++) {
    luaL_checkstack(L, 8, "too many fields");
    lua_rawgeti(L, fields, (lua_Integer)i + 1);
    luaL_checktype(L, -1, LUA_TTABLE);
    fs[i].patterns = strings(L, lua_gettop(L), "patterns", &fs[i].npatterns);
  }
  s.rules = rs;
  s.fields = fs;
  classifier *c = lua_newuserdatauv(L, sizeof *c, 1);
  c->lc = NULL;
  c->nfields = s.nfields;
  luaL_setmetatable(L, CLASSIFIER_MT);
  asc_error err;
  if (asc_logclass_new(&s, &c->lc, &err)) return lasc_pusherror(L, &err);
  /* the patterns' texts and string.find (at 0), for Lua's matcher */
  lua_createtable(L, 0, 0);
  lua_getglobal(L, "string");
  if (lua_istable(L, -1)) lua_getfield(L, -1, "find");
  lua_rawseti(L, -3, 0);
  lua_pop(L, lua_istable(L, -1) ? 1 : 0);
  size_t k = 0;
  int slow;
  const char *p;
  while ((p = asc_logclass_pattern(c->lc, k, &slow)) != NULL) {
    lua_pushstring(L, p);
    lua_rawseti(L, -2, (lua_Integer)++k);
  }
  lua_setiuservalue(L, -2, 1);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  return 1;
}

static classifier *check_classifier(lua_State *L, int idx) {
  classifier *c = luaL_checkudata(L, idx, CLASSIFIER_MT);
  luaL_argcheck(L, c->lc != NULL, idx, "classifier freed");
  return c;
}

static int classifier_gc(lua_State *L) {
  classifier *c = luaL_checkudata(L, 1, CLASSIFIER_MT);
  asc_logclass_free(c->lc);
  c->lc = NULL;
  return 0;
}

/* classifier:slow() -> the patterns that Lua's matcher does (outside the linear subset) */
static int classifier_slow(lua_State *L) {
  classifier *c = check_classifier(L, 1);
  lua_newtable(L);
  size_t k = 0, n = 0;
  int slow;
  const char *p;
  while ((p = asc_logclass_pattern(c->lc, k++, &slow)) != NULL) {
    if (!slow) continue;
    lua_pushstring(L, p);
    lua_rawseti(L, -2, (lua_Integer)++n);
  }
  return 1;
}

/* ---------- tally ---------- */

static tally *check_tally(lua_State *L, int idx) {
  tally *t = luaL_checkudata(L, idx, TALLY_MT);
  luaL_argcheck(L, t->counts != NULL, idx, "tally closed");
  return t;
}

static void tally_release(tally *t) {
  if (t->examples)
    for (size_t i = 0; i < t->nslots * t->max_examples; i++) free(t->examples[i].text);
  free(t->examples);
  free(t->nexamples);
  free(t->counts);
  free(t->groups);
  free(t->record_fields);
  free(t->key_fields);
  if (t->csv) asc_csv_writer_abort(t->csv); /* the spool goes with its bytes */
  for (size_t i = 0; t->titles && i < t->nslots; i++) free(t->titles[i]);
  free(t->titles);
  free(t->title_n);
  free(t->title_q);
  for (size_t i = 0; t->files && i <= t->nfiles; i++) free(t->files[i]);
  free(t->files);
  free(t->file_n);
  free(t->file_q);
  memset(t, 0, sizeof *t);
}

static int tally_gc(lua_State *L) {
  tally_release(luaL_checkudata(L, 1, TALLY_MT));
  return 0;
}

static int *indexes(lua_State *L, int t, const char *key, size_t *n) {
  lua_getfield(L, t, key);
  *n = lua_istable(L, -1) ? lua_rawlen(L, -1) : 0;
  int *out = calloc(*n + 1, sizeof *out);
  for (size_t i = 0; out && i < *n; i++) {
    lua_rawgeti(L, -1, (lua_Integer)i + 1);
    out[i] = (int)luaL_optinteger(L, -1, 0) - 1; /* -1: no such field */
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return out;
}

/* Copies of the strings of list t[key] (n of them, from index `from`) and their CSV quoting: 0,
 * or -1 out of memory. */
static int copy_strings(lua_State *L, int t, const char *key, size_t from, size_t n, char ***out,
                        size_t **len, int **quote) {
  *out = calloc(n + from + 1, sizeof **out);
  *len = calloc(n + from + 1, sizeof **len);
  *quote = calloc(n + from + 1, sizeof **quote);
  if (!*out || !*len || !*quote) return -1;
  lua_getfield(L, t, key);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, -1, (lua_Integer)i + 1);
    size_t k;
    const char *s = lua_tolstring(L, -1, &k);
    if (!s) s = "", k = 0;
    if (!((*out)[from + i] = malloc(k + 1))) return -1;
    memcpy((*out)[from + i], s, k + 1);
    (*len)[from + i] = k;
    (*quote)[from + i] = asc_csv_quoting(s, k);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return 0;
}

/* Open the records' CSV on a spool: BOM, header row. 0, or -1 with nil, message, template pushed. */
static int open_csv(lua_State *L, tally *t, int spec) {
  lua_getfield(L, spec, "titles");
  luaL_argcheck(L, lua_istable(L, -1) && lua_rawlen(L, -1) == t->nslots, 1,
                "csv.titles: one title per rule and one more");
  lua_pop(L, 1);
  lua_getfield(L, spec, "files");
  luaL_argcheck(L, lua_istable(L, -1), 1, "csv.files must be a list");
  t->nfiles = lua_rawlen(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, spec, "header");
  luaL_argcheck(L, lua_istable(L, -1), 1, "csv.header must be a list");
  size_t nh = lua_rawlen(L, -1);
  lua_pop(L, 1);
  if (copy_strings(L, spec, "titles", 0, t->nslots, &t->titles, &t->title_n, &t->title_q) ||
      copy_strings(L, spec, "files", 1, t->nfiles, &t->files, &t->file_n, &t->file_q))
    return lasc_oom(L);
  asc_error err;
  if (asc_csv_writer_spool(1, &t->csv, &err)) {
    t->csv = NULL;
    lasc_pusherror(L, &err);
    return -1;
  }
  lua_getfield(L, spec, "header");
  for (size_t i = 0; i < nh; i++) {
    size_t n;
    lua_rawgeti(L, -1, (lua_Integer)i + 1);
    const char *h = lua_tolstring(L, -1, &n);
    t->csv_failed |= asc_csv_write_field(t->csv, h ? h : "", h ? n : 0) != 0;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  t->csv_failed |= asc_csv_end_row(t->csv) != 0;
  return 0;
}

/* logclass.tally{rules = N, examples = 10, group_field = k, record_fields = {k, ...},
 *   key_fields = {k, ...}, csv = {header = {...}, titles = {one per rule, then the title of
 *   error lines no rule matched}, files = {name per file number}}} -> tally, or nil, message
 *   (field numbers 1-based, as in the classifier's fields). With csv, every record is a row
 *   (title, line text, group, file, line number, time, record fields) of a CSV held in a spool
 *   (ascope/spool.h: no named file, bounded memory) until tally:save(path). */
static int l_tally(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer rules = intfield(L, 1, "rules");
  lua_getfield(L, 1, "examples");
  lua_Integer ex = luaL_optinteger(L, -1, 10);
  lua_pop(L, 1);
  luaL_argcheck(L, rules >= 0 && rules < 1 << 20, 1, "rules out of range");
  luaL_argcheck(L, ex >= 0 && ex <= 1000, 1, "examples out of range (0-1000)");
  tally *t = lua_newuserdatauv(L, sizeof *t, 0);
  memset(t, 0, sizeof *t);
  luaL_setmetatable(L, TALLY_MT);
  t->nslots = (size_t)rules + 1;
  t->max_examples = (size_t)ex;
  t->group_field = intfield(L, 1, "group_field") - 1;
  t->counts = calloc(t->nslots, sizeof *t->counts);
  t->nexamples = calloc(t->nslots, sizeof *t->nexamples);
  t->examples = calloc(t->nslots * (t->max_examples ? t->max_examples : 1), sizeof *t->examples);
  t->record_fields = indexes(L, 1, "record_fields", &t->nrecord_fields);
  t->key_fields = indexes(L, 1, "key_fields", &t->nkey_fields);
  if (!t->counts || !t->nexamples || !t->examples || !t->record_fields || !t->key_fields) {
    tally_release(t);
    return lasc_oom(L);
  }
  lua_getfield(L, 1, "csv");
  if (!lua_isnil(L, -1)) {
    luaL_argcheck(L, lua_istable(L, -1), 1, "csv must be a table");
    int spec = lua_gettop(L);
    if (open_csv(L, t, spec)) return 3;
    lua_settop(L, spec - 1);
  } else {
    lua_pop(L, 1);
  }
  return 1;
}

static uint64_t mix(int64_t v) {
  uint64_t x = (uint64_t)v * 0x9E3779B97F4A7C15ull;
  return x ^ (x >> 29);
}

/* The earliest error time of a group: kept while fewer than GROUPS_MAX groups are known. */
static int note_time(tally *t, int64_t id, const char *time, size_t n) {
  if (n > TIME_MAX) n = TIME_MAX;
  if (t->ngroups * 2 >= t->groups_cap) {
    if (t->ngroups >= GROUPS_MAX) {
      for (size_t i = 0, h = mix(id) & (t->groups_cap - 1); i < t->groups_cap;
           i++, h = (h + 1) & (t->groups_cap - 1)) {
        if (t->groups[h].id == NONE) break;
        if (t->groups[h].id == id) goto found_slot;
      }
      t->groups_dropped++;
      return 0;
    }
    size_t cap = t->groups_cap ? t->groups_cap * 2 : 64;
    group *g = malloc(cap * sizeof *g);
    if (!g) return -1;
    for (size_t i = 0; i < cap; i++) g[i].id = NONE;
    for (size_t i = 0; i < t->groups_cap; i++) {
      if (t->groups[i].id == NONE) continue;
      size_t h = mix(t->groups[i].id) & (cap - 1);
      while (g[h].id != NONE) h = (h + 1) & (cap - 1);
      g[h] = t->groups[i];
    }
    free(t->groups);
    t->groups = g;
    t->groups_cap = cap;
  }
found_slot:;
  size_t h = mix(id) & (t->groups_cap - 1);
  while (t->groups[h].id != NONE && t->groups[h].id != id) h = (h + 1) & (t->groups_cap - 1);
  group *g = &t->groups[h];
  if (g->id == NONE) {
    g->id = id;
    t->ngroups++;
  } else {
    size_t m = n < g->time_n ? n : g->time_n;
    int c = memcmp(time, g->time, m);
    if (c > 0 || (c == 0 && n >= g->time_n)) return 0;
  }
  memcpy(g->time, time, n);
  g->time_n = n;
  return 0;
}

static int add_example(tally *t, size_t slot, uint32_t file, int64_t line, const char *text, size_t n) {
  if (t->nexamples[slot] >= t->max_examples) return 0;
  example *e = &t->examples[slot * t->max_examples + t->nexamples[slot]];
  int cut = n > EXAMPLE_MAX;
  if (cut) n = EXAMPLE_MAX;
  if (!(e->text = malloc(n + 4))) return -1;
  memcpy(e->text, text, n);
  if (cut) memcpy(e->text + n, "\xE2\x80\xA6", 3), n += 3; /* … marks a cut example */
  e->len = n;
  e->file = file;
  e->line = line;
  t->nexamples[slot]++;
  return 0;
}

static void cell(tally *t, const char *p, size_t n) {
  t->csv_failed |= asc_csv_write_field(t->csv, p ? p : "", p ? n : 0) != 0;
}

/* A cell whose quoting is known (a number, a title, a file name). */
static void cell_q(tally *t, const char *p, size_t n, int quote) {
  t->csv_failed |= asc_csv_write_field_q(t->csv, p, n, quote) != 0;
}

/* v in decimal into buf (at least 21 bytes): its length. printf's %lld, without its cost on
 * every row of a failure storm. */
static size_t decimal(char *buf, long long v) {
  char tmp[24];
  size_t n = 0, k = 0;
  unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  do {
    tmp[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) buf[k++] = '-';
  while (n) buf[k++] = tmp[--n];
  return k;
}

/* One record: a CSV row, when the tally writes them. */
static void record(tally *t, uint32_t slot, uint32_t file, int64_t group, const asc_logclass_line *ln) {
  t->records++;
  if (!t->csv || t->csv_failed) return;
  char num[32];
  cell_q(t, t->titles[slot], t->title_n[slot], t->title_q[slot]);
  cell(t, ln->text, ln->len);
  cell_q(t, num, group == NONE ? 0 : decimal(num, group), ASC_CSV_PLAIN);
  if (file <= t->nfiles)
    cell_q(t, t->files[file], t->file_n[file], t->file_q[file]);
  else
    cell_q(t, "", 0, ASC_CSV_PLAIN);
  cell_q(t, num, decimal(num, ln->number), ASC_CSV_PLAIN);
  cell(t, ln->time.p, ln->time.n);
  for (size_t i = 0; i < t->nrecord_fields; i++) {
    int k = t->record_fields[i];
    cell(t, k >= 0 ? ln->fields[k].p : NULL, k >= 0 ? ln->fields[k].n : 0);
  }
  t->csv_failed |= asc_csv_end_row(t->csv) != 0;
}

typedef struct scan_ctx {
  lua_State *L;
  tally *t;
  uint32_t file;
  int64_t default_group;
  int on_key;     /* stack index of the key callback, 0 none */
  int classifier; /* stack index */
  int oom;
  size_t nfields;
  char failed[512]; /* the key callback's error */
} scan_ctx;

/* The group of a line: the group field's value read as Lua's tonumber and math.tointeger do,
 * else the file's default group. */
static int64_t group_of(scan_ctx *c, const asc_logclass_line *ln) {
  if (c->t->group_field < 0 || (size_t)c->t->group_field >= c->nfields) return c->default_group;
  const asc_logclass_span *v = &ln->fields[c->t->group_field];
  if (!v->p) return c->default_group;
  char num[64];
  if (v->n >= sizeof num) return NONE;
  memcpy(num, v->p, v->n);
  num[v->n] = '\0';
  lua_State *L = c->L;
  if (lua_stringtonumber(L, num) == 0) return c->default_group;
  int isint;
  lua_Integer g = lua_tointegerx(L, -1, &isint);
  lua_pop(L, 1);
  return isint && g != NONE ? (int64_t)g : NONE;
}

static int on_line(void *ud, const asc_logclass_line *ln) {
  scan_ctx *c = ud;
  tally *t = c->t;
  int64_t group = group_of(c, ln);
  if (ln->cut) t->cut++;
  if (ln->is_error && group != NONE && ln->time.p && note_time(t, group, ln->time.p, ln->time.n))
    return c->oom = 1;
  for (size_t i = 0; i < ln->nmatched; i++) {
    uint32_t slot = ln->matched[i];
    t->counts[slot]++;
    if (add_example(t, slot, c->file, ln->number, ln->text, ln->len)) return c->oom = 1;
    record(t, slot, c->file, group, ln);
  }
  if (ln->nmatched == 0 && ln->is_error) {
    uint32_t slot = (uint32_t)(t->nslots - 1);
    t->counts[slot]++;
    if (add_example(t, slot, c->file, ln->number, ln->text, ln->len)) return c->oom = 1;
    record(t, slot, c->file, group, ln);
  }
  if (!c->on_key || ln->nmatched == 0 || group == NONE) return 0;
  int any = 0;
  for (size_t i = 0; i < t->nkey_fields; i++) {
    int k = t->key_fields[i];
    if (k >= 0 && (size_t)k < c->nfields && ln->fields[k].p) any = 1;
  }
  if (!any) return 0;
  /* on_key(group, line, time, key values...): the few lines that name a task, kernel or op */
  lua_State *L = c->L;
  lua_pushvalue(L, c->on_key);
  lua_pushinteger(L, group);
  lua_pushinteger(L, ln->number);
  if (ln->time.p)
    lua_pushlstring(L, ln->time.p, ln->time.n);
  else
    lua_pushnil(L);
  for (size_t i = 0; i < t->nkey_fields; i++) {
    int k = t->key_fields[i];
    if (k >= 0 && (size_t)k < c->nfields && ln->fields[k].p)
      lua_pushlstring(L, ln->fields[k].p, ln->fields[k].n);
    else
      lua_pushnil(L);
  }
  if (lua_pcall(L, 3 + (int)t->nkey_fields, 0, 0) != LUA_OK) {
    snprintf(c->failed, sizeof c->failed, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
    lua_pop(L, 1);
    return 1;
  }
  return 0;
}

/* Lua's own matcher for a pattern outside the linear subset: string.find(s, p, init + 1). */
static int slow_find(void *ud, size_t pattern, const char *s, size_t n, size_t init, asc_logclass_hit *hit,
                     asc_error *err) {
  scan_ctx *c = ud;
  lua_State *L = c->L;
  int top = lua_gettop(L);
  lua_getiuservalue(L, c->classifier, 1);
  lua_rawgeti(L, -1, 0); /* string.find */
  lua_pushlstring(L, s, n);
  lua_rawgeti(L, top + 1, (lua_Integer)pattern + 1);
  lua_pushinteger(L, (lua_Integer)init + 1);
  if (lua_pcall(L, 3, 3, 0) != LUA_OK) {
    asc_fail(err, NULL, -1, 0, 0, "%s", lua_tostring(L, -1));
    lua_settop(L, top);
    return -1;
  }
  if (lua_isnil(L, -3)) {
    lua_settop(L, top);
    return 0;
  }
  hit->start = (size_t)lua_tointeger(L, -3) - 1;
  hit->end = (size_t)lua_tointeger(L, -2);
  if (lua_isnil(L, -1)) {
    hit->cap = s + hit->start;
    hit->cap_len = hit->end - hit->start;
  } else {
    hit->cap = lua_tolstring(L, -1, &hit->cap_len);
    /* kept alive in the tally's scratch slot until the next call */
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "ascope.logclass.capture");
  }
  lua_settop(L, top);
  return 1;
}

/* classifier:scan(path, tally, file_number, default_group, on_key, {threads = n, block = bytes})
 * -> true and the NUL bytes dropped (see asc_logclass_scan), or nil, message. threads (default 1): threads
 * classifying blocks of the file while this one reads it and tallies in the file's order (the same tally as
 * with one); block: the bytes read at a time (default and most 4 MiB; a longer line is looked at through its
 * head). */
static int classifier_scan(lua_State *L) {
  classifier *cl = check_classifier(L, 1);
  const char *path = luaL_checkstring(L, 2);
  tally *t = check_tally(L, 3);
  lua_Integer file = luaL_checkinteger(L, 4);
  luaL_argcheck(L, file >= 0 && file <= UINT32_MAX, 4, "file number out of range");
  scan_ctx c = {L,
                t,
                (uint32_t)file,
                lua_isnoneornil(L, 5) ? NONE : (int64_t)luaL_checkinteger(L, 5),
                0,
                1,
                0,
                cl->nfields,
                ""};
  if (!lua_isnoneornil(L, 6)) {
    luaL_checktype(L, 6, LUA_TFUNCTION);
    c.on_key = 6;
  }
  lua_Integer threads = 1, block = ASC_LOGCLASS_BLOCK_MAX;
  if (!lua_isnoneornil(L, 7)) {
    luaL_checktype(L, 7, LUA_TTABLE);
    lua_getfield(L, 7, "threads");
    threads = luaL_optinteger(L, -1, threads);
    lua_getfield(L, 7, "block");
    block = luaL_optinteger(L, -1, block);
    luaL_argcheck(L, threads >= 1, 7, "threads: at least 1");
    luaL_argcheck(L, block >= ASC_LOGCLASS_BLOCK_MIN && block <= ASC_LOGCLASS_BLOCK_MAX, 7,
                  "block out of range");
  }
  lua_settop(L, 6);
  asc_logclass_set_threads(cl->lc, threads > INT_MAX ? INT_MAX : (int)threads);
  asc_logclass_set_block(cl->lc, (size_t)block);
  asc_logclass_set_slow(cl->lc, slow_find, &c);
  asc_error err;
  int rc = asc_logclass_scan(cl->lc, path, on_line, &c, &err);
  asc_logclass_set_slow(cl->lc, NULL, NULL);
  if (c.oom) return lasc_oom(L);
  if (c.failed[0]) return luaL_error(L, "%s", c.failed);
  if (rc) return lasc_pusherror(L, &err);
  lua_pushboolean(L, 1);
  lua_pushinteger(L, (lua_Integer)asc_logclass_nul_bytes(cl->lc));
  return 2;
}

/* tally:counts() -> {slot -> count} for the slots with lines (slot rules + 1: no rule matched) */
static int tally_counts(lua_State *L) {
  tally *t = check_tally(L, 1);
  lua_newtable(L);
  for (size_t i = 0; i < t->nslots; i++) {
    if (!t->counts[i]) continue;
    lua_pushinteger(L, t->counts[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* tally:examples(slot) -> {{file = number, line = n, text = s}, ...} */
static int tally_examples(lua_State *L) {
  tally *t = check_tally(L, 1);
  lua_Integer slot = luaL_checkinteger(L, 2);
  luaL_argcheck(L, slot >= 1 && (size_t)slot <= t->nslots, 2, "no such slot");
  size_t s = (size_t)slot - 1;
  lua_createtable(L, (int)t->nexamples[s], 0);
  for (size_t i = 0; i < t->nexamples[s]; i++) {
    const example *e = &t->examples[s * t->max_examples + i];
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, e->file);
    lua_setfield(L, -2, "file");
    lua_pushinteger(L, e->line);
    lua_setfield(L, -2, "line");
    lua_pushlstring(L, e->text, e->len);
    lua_setfield(L, -2, "text");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* tally:first() -> {group -> earliest time of its error lines} */
static int tally_first(lua_State *L) {
  tally *t = check_tally(L, 1);
  lua_newtable(L);
  for (size_t i = 0; i < t->groups_cap; i++) {
    if (t->groups[i].id == NONE) continue;
    lua_pushlstring(L, t->groups[i].time, t->groups[i].time_n);
    lua_rawseti(L, -2, t->groups[i].id);
  }
  return 1;
}

/* tally:stats() -> {records, cut (lines looked at through their head only), groups_dropped} */
static int tally_stats(lua_State *L) {
  tally *t = check_tally(L, 1);
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, t->records);
  lua_setfield(L, -2, "records");
  lua_pushinteger(L, t->cut);
  lua_setfield(L, -2, "cut");
  lua_pushinteger(L, (lua_Integer)t->groups_dropped);
  lua_setfield(L, -2, "groups_dropped");
  return 1;
}

/* tally:save(path) -> true, or nil, message: the records' CSV written to path (atomically); the
 * records stay, so a tally can be saved again. */
static int tally_save(lua_State *L) {
  tally *t = check_tally(L, 1);
  const char *path = luaL_checkstring(L, 2);
  luaL_argcheck(L, t->csv != NULL, 1, "no records CSV (tally made without csv)");
  if (t->csv_failed) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: write failed (disk full in the temporary folder?)", path);
    return 2;
  }
  asc_error err;
  if (asc_csv_writer_save(t->csv, path, &err)) return lasc_pusherror(L, &err);
  lua_pushboolean(L, 1);
  return 1;
}

/* logclass.find(s, pattern [, init [, word]]) -> start, end, first capture (as string.find,
 * in linear time), nil when there is no match, or false, reason when the pattern is outside the
 * linear subset. word: the match must not touch a letter or digit. */
static int l_find(lua_State *L) {
  size_t n, pn;
  const char *s = luaL_checklstring(L, 1, &n);
  const char *pat = luaL_checklstring(L, 2, &pn);
  lua_Integer init = luaL_optinteger(L, 3, 1);
  int word = lua_toboolean(L, 4);
  if (init < 0) init = (lua_Integer)n + init + 1 < 1 ? 1 : (lua_Integer)n + init + 1;
  if (init == 0) init = 1;
  const char *why;
  asc_lpat *p = asc_lpat_compile(pat, pn, word ? ASC_LPAT_WORD : 0, &why);
  if (!p) {
    lua_pushboolean(L, 0);
    lua_pushstring(L, why);
    return 2;
  }
  asc_lpat_match m;
  int found = (size_t)init - 1 <= n && asc_lpat_find(p, s, n, (size_t)init - 1, &m);
  asc_lpat_free(p);
  if (!found) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushinteger(L, (lua_Integer)m.start + 1);
  lua_pushinteger(L, (lua_Integer)m.end);
  lua_pushlstring(L, s + m.cap_start, m.cap_end - m.cap_start);
  return 3;
}

int lasc_open_logclass(lua_State *L) {
  static const luaL_Reg classifier_m[] = {{"scan", classifier_scan}, {"slow", classifier_slow}, {NULL, NULL}};
  static const luaL_Reg tally_m[] = {{"counts", tally_counts}, {"examples", tally_examples},
                                     {"first", tally_first},   {"stats", tally_stats},
                                     {"save", tally_save},     {NULL, NULL}};
  static const luaL_Reg fns[] = {{"new", l_new}, {"tally", l_tally}, {"find", l_find}, {NULL, NULL}};
  if (luaL_newmetatable(L, CLASSIFIER_MT)) {
    lua_pushcfunction(L, classifier_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, classifier_m);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, TALLY_MT)) {
    lua_pushcfunction(L, tally_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, tally_gc);
    lua_setfield(L, -2, "__close");
    luaL_newlib(L, tally_m);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, fns);
  return 1;
}
