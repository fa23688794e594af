/* SQLite, opened read-only so a profiling folder is never touched. The path is given to SQLite
 * as a plain file name (or, for a WAL database, as a URI with every byte that could mean
 * something escaped: a '%41' or '?' in a folder name means nothing), only real tables count,
 * and every query runs under a step budget so a hostile schema cannot hang.
 *
 * A database in WAL mode (header bytes 18-19 = 2) is read through a -shm index SQLite creates
 * beside it, even read-only: it left -wal and -shm files in the user's folder, and in a folder
 * the user may only read it could not be opened at all. Without a -wal holding writes, such a
 * file is opened immutable (no index, no lock, nothing created); with one, those writes are the
 * latest data, so it is opened as SQLite opens it, and a failure says why. */
#include "ascope/db.h"

#include "ascope/fs.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct asc_db {
  sqlite3 *h;
  int wal_pending; /* a -wal beside it holds writes not merged into the file */
  char path[1024];
  long long budget, used; /* progress-handler calls a query may take, and took */
};

/* SQLite calls this every PROGRESS_STEPS virtual-machine steps; non-zero interrupts. */
enum { PROGRESS_STEPS = 1000 };
static int over_budget(void *ud) {
  asc_db *db = ud;
  return ++db->used > db->budget;
}

static unsigned long be(const unsigned char *p, int n) {
  unsigned long v = 0;
  for (int i = 0; i < n; i++) v = v << 8 | p[i];
  return v;
}

/* The size the 100-byte header gives the file (page size x page count), or 0 where it gives
 * none: the count is trusted only when its "valid for" counter is the change counter, as
 * SQLite itself does (files written before 3.7.0 leave it stale). */
static long long header_bytes(const unsigned char *h, size_t got) {
  if (got < 100) return 0;
  unsigned long page = be(h + 16, 2), pages = be(h + 28, 4);
  if (page == 1) page = 65536;
  if (page < 512 || (page & (page - 1)) != 0) return 0;
  if (pages == 0 || be(h + 24, 4) != be(h + 92, 4)) return 0;
  return (long long)page * (long long)pages;
}

static int is_wal(const unsigned char *h, size_t got) { return got >= 20 && (h[18] == 2 || h[19] == 2); }

/* "file:<path>?immutable=1" with every byte but [A-Za-z0-9/._~-] percent-encoded; malloc'd. An
 * absolute path follows an empty authority ("file:///x"): after "file:" a path starting "//"
 * would be read as a host. */
static char *immutable_uri(const char *path) {
  static const char keep[] = "/._~-", hex[] = "0123456789ABCDEF";
  size_t n = strlen(path);
  char *u = malloc(3 * n + 32), *o = u;
  if (!u) return NULL;
  o += sprintf(o, path[0] == '/' ? "file://" : "file:");
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
        strchr(keep, *p)) {
      *o++ = (char)*p;
    } else {
      *o++ = '%';
      *o++ = hex[*p >> 4];
      *o++ = hex[*p & 15];
    }
  }
  strcpy(o, "?immutable=1");
  return u;
}

/* 1 when path-wal is there and not empty; path is the file SQLite opens, a link's target (its
 * -wal is beside the target, not beside the link) */
static int wal_has_writes(const char *path) {
  size_t n = strlen(path);
  char *w = malloc(n + 5);
  if (!w) return 1; /* then SQLite decides, as for any WAL file */
  memcpy(w, path, n);
  memcpy(w + n, "-wal", 5);
  struct stat st;
  int has = stat(w, &st) == 0 && st.st_size > 0;
  free(w);
  return has;
}

int asc_db_open(const char *path, asc_db **out, asc_error *err) {
  *out = NULL;
  FILE *probe = asc_open_input(path, err);
  if (!probe) return -1;
  unsigned char head[100] = {0};
  size_t got = fread(head, 1, sizeof head, probe);
  fclose(probe);
  if (got < 16 || memcmp(head, "SQLite format 3", 16) != 0)
    return asc_fail(err, path, 0, 0, 0, "not an SQLite database");
  struct stat st;
  long long size = stat(path, &st) == 0 ? (long long)st.st_size : 0;
  long long want = header_bytes(head, got);
  /* a copy cut short (a full disk, an interrupted transfer) otherwise reads as a database
   * without the tables that were in its lost pages, or as "malformed" at some later query */
  if (want > size)
    return asc_fail(err, path, size, 0, 0, "the file is cut short: %lld bytes of the %lld its header gives",
                    size, want);
  asc_db *db = calloc(1, sizeof *db);
  if (!db) return asc_fail(err, path, -1, 0, 0, "out of memory");
  snprintf(db->path, sizeof db->path, "%s", path);
  int flags = SQLITE_OPEN_READONLY;
  char *name = NULL;
  char *real = is_wal(head, got) ? realpath(path, NULL) : NULL;
  if (is_wal(head, got) && !(db->wal_pending = wal_has_writes(real ? real : path))) {
    name = immutable_uri(real ? real : path);
    flags |= SQLITE_OPEN_URI;
  } else if ((name = malloc(strlen(path) + 3)) != NULL) {
    /* a name starting with "file:" would be read as a URI where SQLite is built to accept them */
    sprintf(name, "%s%s", strncmp(path, "file:", 5) == 0 ? "./" : "", path);
  }
  free(real);
  if (!name) {
    free(db);
    return asc_fail(err, path, -1, 0, 0, "out of memory");
  }
  int rc = sqlite3_open_v2(name, &db->h, flags, NULL);
  free(name);
  if (rc != SQLITE_OK) {
    asc_fail(err, path, -1, 0, 0, "cannot open database: %s",
             db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
    sqlite3_close(db->h);
    free(db);
    return -1;
  }
  /* 10^8 steps plus 1000 per byte of the file: a full scan of every table fits many times
   * over, a recursive view or a runaway join does not */
  asc_db_set_budget(db, 100000000LL + size * 1000);
  sqlite3_progress_handler(db->h, PROGRESS_STEPS, over_budget, db);
  *out = db;
  return 0;
}

void asc_db_set_budget(asc_db *db, long long steps) { db->budget = steps / PROGRESS_STEPS + 1; }

void asc_db_close(asc_db *db) {
  if (!db) return;
  sqlite3_close(db->h);
  free(db);
}

void asc_db_result_free(asc_db_result *res) {
  for (size_t i = 0; i < res->ncols; i++) {
    if (res->names) free(res->names[i]);
    if (res->cols) asc_col_free(&res->cols[i]);
  }
  free(res->names);
  free(res->cols);
  memset(res, 0, sizeof *res);
}

static int kind_from_decl(const char *decl, asc_kind *k) {
  if (!decl || !*decl) return 0;
  char up[64];
  size_t i = 0;
  for (; i < sizeof up - 1 && decl[i]; i++)
    up[i] = (char)(decl[i] >= 'a' && decl[i] <= 'z' ? decl[i] - 32 : decl[i]);
  up[i] = '\0';
  if (strstr(up, "INT"))
    *k = ASC_I64;
  else if (strstr(up, "REAL") || strstr(up, "FLOA") || strstr(up, "DOUB") || strstr(up, "NUMERIC"))
    *k = ASC_F64;
  else
    *k = ASC_STR;
  return 1;
}

int asc_db_query(asc_db *db, const char *sql, const char *const *params, size_t nparams, asc_strtab *strings,
                 asc_db_result *res, asc_error *err) {
  memset(res, 0, sizeof *res);
  sqlite3_stmt *st;
  db->used = 0;
  if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
    return asc_fail(err, db->path, -1, 0, 0, "query failed: %s", sqlite3_errmsg(db->h));
  for (size_t i = 0; i < nparams; i++)
    if (params[i]) sqlite3_bind_text(st, (int)i + 1, params[i], -1, SQLITE_STATIC);
  size_t nc = (size_t)sqlite3_column_count(st);
  res->ncols = nc;
  res->names = calloc(nc + 1, sizeof *res->names);
  res->cols = calloc(nc + 1, sizeof *res->cols);
  int *decided = calloc(nc + 1, sizeof *decided);
  int rc = 0;
  if (!res->names || !res->cols || !decided) {
    rc = asc_fail(err, db->path, -1, 0, 0, "out of memory");
    goto done;
  }
  for (size_t j = 0; j < nc; j++) {
    res->names[j] = strdup(sqlite3_column_name(st, (int)j));
    asc_kind k = ASC_STR;
    decided[j] = kind_from_decl(sqlite3_column_decltype(st, (int)j), &k);
    asc_col_init(&res->cols[j], k);
  }
  int step;
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    for (size_t j = 0; j < nc; j++) {
      asc_col *c = &res->cols[j];
      int t = sqlite3_column_type(st, (int)j);
      if (!decided[j] && t != SQLITE_NULL) {
        /* no declared type: the first value decides; earlier rows were all null */
        asc_kind k = t == SQLITE_INTEGER ? ASC_I64 : t == SQLITE_FLOAT ? ASC_F64 : ASC_STR;
        if (k != c->kind) {
          size_t n = c->n;
          asc_col_free(c);
          asc_col_init(c, k);
          for (size_t r = 0; r < n; r++)
            if (asc_col_push_null(c)) goto oom;
        }
        decided[j] = 1;
      }
      int r;
      if (t == SQLITE_NULL) {
        r = asc_col_push_null(c);
      } else if (c->kind == ASC_I64) {
        r = t == SQLITE_TEXT && sqlite3_column_bytes(st, (int)j) == 0
                ? asc_col_push_null(c)
                : asc_col_push_i64(c, sqlite3_column_int64(st, (int)j));
      } else if (c->kind == ASC_F64) {
        r = asc_col_push_f64(c, sqlite3_column_double(st, (int)j));
      } else {
        const char *s = (const char *)sqlite3_column_text(st, (int)j);
        uint32_t id = 0;
        r = s && asc_strtab_intern(strings, s, (size_t)sqlite3_column_bytes(st, (int)j), &id);
        r = r || asc_col_push_str(c, id);
      }
      if (r) goto oom;
    }
    res->nrows++;
  }
  if (step == SQLITE_INTERRUPT)
    rc = asc_fail(err, db->path, -1, 0, 0,
                  "query stopped: it ran longer than a database of this size can need");
  else if (step != SQLITE_DONE)
    rc = asc_fail(err, db->path, -1, 0, 0, "query failed: %s", sqlite3_errmsg(db->h));
  goto done;
oom:
  rc = asc_fail(err, db->path, -1, 0, 0, "out of memory");
done:
  sqlite3_finalize(st);
  free(decided);
  if (rc) asc_db_result_free(res);
  return rc;
}

/* Why the schema could not be read. A hot journal beside the file (a writer stopped mid-way)
 * must be rolled back before any read, which a read-only open cannot do. */
static int schema_fail(asc_db *db, const char *why, asc_error *err) {
  if (db->wal_pending)
    return asc_fail(err, db->path, -1, 0, 0,
                    "its latest writes are in the -wal beside it, which SQLite reads through a -shm index it "
                    "could not make there: %s (open a copy of its folder)",
                    why);
  if (sqlite3_extended_errcode(db->h) == SQLITE_READONLY_ROLLBACK)
    return asc_fail(err, db->path, -1, 0, 0,
                    "a write to it was cut off: the -journal beside it must be rolled back before it can be "
                    "read, and it is opened read-only (open a copy of its folder)");
  return asc_fail(err, db->path, -1, 0, 0, "cannot read the schema: %s", why);
}

int asc_db_has_table(asc_db *db, const char *name, asc_error *err) {
  sqlite3_stmt *st;
  /* a schema that cannot be read is an error of its own, not a table missing */
  if (sqlite3_prepare_v2(db->h, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st,
                         NULL) != SQLITE_OK)
    return schema_fail(db, sqlite3_errmsg(db->h), err);
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc == SQLITE_ROW) return 1;
  if (rc == SQLITE_DONE) return 0;
  return schema_fail(db, sqlite3_errstr(rc), err);
}
