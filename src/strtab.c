/* Open-addressing hash of strings stored in an arena of chunks. Ids are dense, starting at 1,
 * so columns can hold 4-byte ids instead of pointers.
 *
 * The arena is a list of chunks that never move: a string's text stays where it was put while
 * its chunk is in memory (no copy on growth, so no moment holding the old arena and the new
 * one, and a pointer from asc_strtab_get survives later interning). Chunks grow from 64 KiB to 2 MiB;
 * a string longer than that gets a chunk of its own size. Strings are laid out in id order,
 * chunk after chunk, which is what lets asc_strtab_drain free a table's text as it goes.
 *
 * Past the table's memory (asc_strtab_set_memory), each chunk that fills is written to a
 * nameless temporary file and its memory given back: the text of a million distinct call
 * stacks is as large as the trace it came from, and held in memory it made the peak grow
 * with the trace. The index (a few words a string) stays in memory, so interning still finds
 * a string by its hash and reads the file only to compare equal hashes. A spilled string is
 * read back into one of a few windows of the table; reads in id order (the order of the rows
 * that met them) take one read a window.
 *
 * Chunks of 2 MiB are mapped on their own, aligned and marked for transparent huge pages: a
 * million distinct call stacks put hundreds of MB of new text here, and where the kernel gives
 * huge pages on request only (transparent_hugepage "madvise") every 4 KiB of it would
 * otherwise cost a page fault of its own (only once a table holds 16 MiB: a partly filled huge
 * page is resident whole). Mapped rather than allocated, their memory goes back to the system
 * when they are spilled or freed, whatever the allocator's thresholds. */
#include "ascope/strtab.h"
#include "ascope/checked.h"
#include "ascope/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHUNK_FIRST ((size_t)1 << 16)
#define CHUNK_MOST ((size_t)1 << 21)  /* a huge page on x86-64 and on aarch64 with 4 KiB pages */
#define HUGE_AFTER ((size_t)16 << 20) /* a partly filled huge page is then at most an eighth more */
#define MEMORY_DEFAULT ((size_t)16 << 20)
#define WINDOW ((size_t)16 << 10) /* read back at least this much: the strings after it follow */

typedef struct {
  uint32_t chunk, off, len, hash;
} entry;

typedef struct {
  char *p;     /* the text; NULL once spilled, or freed by a drain */
  size_t size; /* room: bytes mapped or allocated */
  size_t used; /* bytes of strings in it (set when it is left for the next) */
  int fd;      /* spilled: the file it is in, at off */
  off_t off;
} chunk;

typedef struct { /* the text of a spilled string is read into one of these */
  int fd;
  off_t off;
  size_t n, cap;
  char *buf;
} window;

struct asc_strtab {
  chunk *chunks;
  uint32_t nchunks, chunks_cap;
  size_t fill;        /* of the last chunk */
  size_t chunk_bytes; /* the resident chunks' size, for asc_strtab_bytes */
  size_t memory;      /* chunks spill once the resident ones would pass this */
  entry *ents;        /* index by id; ents[0] unused */
  uint32_t nents, ents_cap;
  uint32_t *slots; /* 0 = empty, else id */
  size_t nslots;   /* power of two; 0 once drained */
  int fd;          /* the spill file (-1: none yet), made by process pid: a forked child */
  pid_t pid;       /* spills to a file of its own, as the parent goes on writing to its */
  off_t fd_end;
  int *fds; /* every spill file this table opened, to close */
  size_t nfds;
  int no_spill; /* the file could not be made or written: the text stays in memory */
  char *spare;  /* a spilled chunk's memory, for the next chunk: fresh pages fault one by one */
  window *win;  /* ASC_STRTAB_WINDOWS of them, made at the first read back */
  unsigned next_win;
};

/* ASCOPE_STRING_MEMORY: digits only (no sign, no blank: the front end warns about anything else
 * by the same rule), at most SIZE_MAX >> 21 MiB; else the default */
static size_t env_memory(void) {
  const char *v = getenv("ASCOPE_STRING_MEMORY");
  if (!v || !*v) return MEMORY_DEFAULT;
  for (const char *p = v; *p; p++)
    if (*p < '0' || *p > '9') return MEMORY_DEFAULT;
  char *end;
  errno = 0;
  unsigned long long mib = strtoull(v, &end, 10);
  if (errno || *end || mib > ((size_t)-1 >> 21)) return MEMORY_DEFAULT;
  return (size_t)mib << 20;
}

static uint32_t hash_bytes(const char *s, size_t n) {
  uint64_t h = asc_hash_bytes(asc_hash_seed() ^ n, s, n);
  uint32_t r = (uint32_t)(h ^ (h >> 32));
  return r ? r : 1;
}

asc_strtab *asc_strtab_new(void) {
  asc_strtab *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->fd = -1;
  t->memory = env_memory();
  t->nslots = 1024;
  t->slots = calloc(t->nslots, sizeof *t->slots);
  t->ents_cap = 512;
  t->ents = asc_alloc_array(t->ents_cap, sizeof *t->ents);
  if (!t->slots || !t->ents) {
    asc_strtab_free(t);
    return NULL;
  }
  t->nents = 1;
  return t;
}

void asc_strtab_set_memory(asc_strtab *t, size_t bytes) { t->memory = bytes; }

size_t asc_strtab_memory(const asc_strtab *t) { return t->memory; }

/* room for `size` bytes (2 MiB and over: rounded up to whole pages, in *size), mapped and
 * aligned to 2 MiB; less allocated */
static char *chunk_alloc(size_t *size) {
  if (*size < CHUNK_MOST) return malloc(*size);
  size_t page = (size_t)sysconf(_SC_PAGESIZE), span;
  if (page == 0 || page > CHUNK_MOST || (page & (page - 1))) page = 4096;
  if (asc_size_add(*size, page - 1, size)) return NULL;
  *size &= ~(page - 1); /* an unmapping of the tail must start on a page */
  if (asc_size_add(*size, CHUNK_MOST, &span)) return NULL;
  char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  uintptr_t a = ((uintptr_t)p + CHUNK_MOST - 1) & ~(uintptr_t)(CHUNK_MOST - 1);
  size_t head = (size_t)(a - (uintptr_t)p), tail = span - head - *size;
  if (head) munmap(p, head);
  if (tail) munmap((char *)a + *size, tail);
  return (char *)a;
}

static void chunk_release(chunk *c) {
  if (!c->p) return;
  if (c->size < CHUNK_MOST)
    free(c->p);
  else
    munmap(c->p, c->size);
  c->p = NULL;
}

void asc_strtab_free(asc_strtab *t) {
  if (!t) return;
  for (uint32_t c = 0; c < t->nchunks; c++) chunk_release(&t->chunks[c]);
  if (t->spare) munmap(t->spare, CHUNK_MOST);
  for (size_t k = 0; k < t->nfds; k++) close(t->fds[k]);
  free(t->fds);
  if (t->win)
    for (int w = 0; w < ASC_STRTAB_WINDOWS; w++) free(t->win[w].buf);
  free(t->win);
  free(t->chunks);
  free(t->ents);
  free(t->slots);
  free(t);
}

/* A read back that fails leaves no answer that is not a lie (a missing string would drop a
 * call stack without a word): the process stops with the reason. Only an I/O error of the
 * temporary folder's disk can cause it, after the write of the same bytes succeeded. */
static void read_failed(int e) {
  fprintf(stderr, "ascope: cannot read back strings kept in a temporary file: %s\n", strerror(e ? e : EIO));
  exit(70);
}

static void read_all(int fd, char *buf, size_t n, off_t off) {
  while (n) {
    ssize_t r = pread(fd, buf, n, off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) read_failed(r < 0 ? errno : 0);
    buf += r, n -= (size_t)r, off += r;
  }
}

static int write_all(int fd, const char *buf, size_t n, off_t off) {
  while (n) {
    ssize_t r = pwrite(fd, buf, n, off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    buf += r, n -= (size_t)r, off += r;
  }
  return 0;
}

static int open_spill(asc_strtab *t) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  char path[4096];
  if (snprintf(path, sizeof path, "%s/ascope-strings-XXXXXX", dir) >= (int)sizeof path) return -1;
  int *fds = asc_realloc_array(t->fds, t->nfds + 1, sizeof *fds);
  if (!fds) return -1;
  t->fds = fds;
  int fd = mkostemp(path, O_CLOEXEC);
  if (fd < 0) return -1;
  unlink(path); /* nameless: it goes when it is closed, or when the process ends or dies */
  t->fds[t->nfds++] = fd;
  /* a file made before a fork is the parent's to write on: left open for the chunks in it */
  t->fd = fd;
  t->pid = getpid();
  t->fd_end = 0;
  return 0;
}

/* chunk c, full, to the spill file and out of memory; it stays where it is when it cannot */
static void spill(asc_strtab *t, uint32_t c) {
  chunk *ch = &t->chunks[c];
  if (t->no_spill || !ch->p) return;
  if ((t->fd < 0 || t->pid != getpid()) && open_spill(t)) {
    t->no_spill = 1;
    return;
  }
  if (write_all(t->fd, ch->p, ch->used, t->fd_end)) {
    t->no_spill = 1;
    return;
  }
  ch->fd = t->fd;
  ch->off = t->fd_end;
  t->fd_end += (off_t)ch->used;
  t->chunk_bytes -= ch->size;
  if (ch->size == CHUNK_MOST && !t->spare) {
    t->spare = ch->p;
    ch->p = NULL;
  }
  chunk_release(ch);
}

/* Room for n + 1 bytes at the end of the last chunk, starting a new chunk when it lacks it.
 * *left: the chunk left for the new one when it is to be spilled (else UINT32_MAX), which the
 * caller spills once the string is copied: the string may be text of that very chunk. Nothing
 * changes when the new chunk cannot be had. */
static int make_room(asc_strtab *t, size_t n, uint32_t *left) {
  *left = UINT32_MAX;
  if (t->nchunks && t->chunks[t->nchunks - 1].size - t->fill >= n + 1) return 0;
  if (t->nchunks == UINT32_MAX) return -1;
  if (t->nchunks == t->chunks_cap) {
    uint32_t nc = t->chunks_cap ? t->chunks_cap * 2 : 8;
    chunk *p = asc_realloc_array(t->chunks, nc, sizeof *p);
    if (!p) return -1;
    t->chunks = p;
    t->chunks_cap = nc;
  }
  size_t size = t->nchunks >= 5 ? CHUNK_MOST : CHUNK_FIRST << t->nchunks;
  if (size < n + 1) size = n + 1;
  char *c = size == CHUNK_MOST && t->spare ? t->spare : chunk_alloc(&size);
  if (!c) return -1;
  if (c == t->spare) t->spare = NULL;
#ifdef MADV_HUGEPAGE
  if (size == CHUNK_MOST && t->chunk_bytes >= HUGE_AFTER) (void)madvise(c, size, MADV_HUGEPAGE); /* a hint */
#endif
  if (t->nchunks) {
    t->chunks[t->nchunks - 1].used = t->fill;
    if (t->chunk_bytes + size > t->memory) *left = t->nchunks - 1;
  }
  t->chunks[t->nchunks++] = (chunk){c, size, 0, -1, 0};
  t->fill = 0;
  t->chunk_bytes += size;
  return 0;
}

/* The slots twice as many, filled again from the entries (which hold their hashes). */
static int grow_slots(asc_strtab *t) {
  size_t nn;
  if (asc_size_mul(t->nslots, 2, &nn)) return -1;
  uint32_t *ns = calloc(nn, sizeof *ns);
  if (!ns) return -1;
  for (uint32_t id = 1; id < t->nents; id++) {
    size_t i = t->ents[id].hash & (nn - 1);
    while (ns[i]) i = (i + 1) & (nn - 1);
    ns[i] = id;
  }
  free(t->slots);
  t->slots = ns;
  t->nslots = nn;
  return 0;
}

/* The text of entry e, its NUL after it: where it is in memory, or read back into a window
 * (round robin, so the last ASC_STRTAB_WINDOWS - 1 reads before this one stay good). */
static const char *text(const asc_strtab *t, const entry *e) {
  const chunk *c = &t->chunks[e->chunk];
  if (c->p) return c->p + e->off;
  if (c->fd < 0) return NULL; /* freed by a drain */
  off_t at = c->off + (off_t)e->off;
  size_t need = (size_t)e->len + 1;
  window *w = t->win;
  if (w)
    for (int k = 0; k < ASC_STRTAB_WINDOWS; k++)
      if (w[k].fd == c->fd && w[k].off <= at && (size_t)(at - w[k].off) + need <= w[k].n)
        return w[k].buf + (at - w[k].off);
  asc_strtab *mt = (asc_strtab *)t; /* the windows are a cache: the strings do not change */
  if (!w && !(w = mt->win = calloc(ASC_STRTAB_WINDOWS, sizeof *w))) read_failed(ENOMEM);
  window *k = &w[mt->next_win++ % ASC_STRTAB_WINDOWS];
  size_t n = need > WINDOW ? need : WINDOW;
  if (n > c->used - e->off) n = c->used - e->off; /* the chunk's end: its last NUL */
  if (n > k->cap) {
    char *b = realloc(k->buf, n);
    if (!b) read_failed(ENOMEM);
    k->buf = b;
    k->cap = n;
  }
  k->fd = -1; /* no window while it is read */
  read_all(c->fd, k->buf, n, at);
  k->fd = c->fd;
  k->off = at;
  k->n = n;
  if (k->cap > 4 * WINDOW && n <= WINDOW) { /* a long string's room is not kept for good */
    char *b = realloc(k->buf, n);
    if (b) k->buf = b, k->cap = n;
  }
  return k->buf;
}

int asc_strtab_intern(asc_strtab *t, const char *s, size_t n, uint32_t *id) {
  if (n >= UINT32_MAX || !t->nslots) return -1;
  uint32_t h = hash_bytes(s, n);
  size_t mask = t->nslots - 1, i = h & mask;
  for (uint32_t cur; (cur = t->slots[i]) != 0; i = (i + 1) & mask) {
    const entry *e = &t->ents[cur];
    if (e->hash == h && e->len == n && memcmp(text(t, e), s, n) == 0) {
      *id = cur;
      return 0;
    }
  }
  if (t->nents == UINT32_MAX) return -1;
  if (t->nents == t->ents_cap) {
    uint32_t nc = t->ents_cap > UINT32_MAX / 2 ? UINT32_MAX : t->ents_cap * 2;
    entry *ne = asc_realloc_array(t->ents, (size_t)nc, sizeof *ne);
    if (!ne) return -1;
    t->ents = ne;
    t->ents_cap = nc;
  }
  uint32_t left;
  if (make_room(t, n, &left)) return -1;
  char *at = t->chunks[t->nchunks - 1].p + t->fill;
  if (n) memcpy(at, s, n);
  at[n] = '\0';
  uint32_t nid = t->nents++;
  t->ents[nid] = (entry){t->nchunks - 1, (uint32_t)t->fill, (uint32_t)n, h};
  t->fill += n + 1;
  t->slots[i] = nid;
  *id = nid;
  if (left != UINT32_MAX) spill(t, left);
  if ((size_t)t->nents * 2 > t->nslots && grow_slots(t) != 0) return -1;
  return 0;
}

const char *asc_strtab_get(const asc_strtab *t, uint32_t id, size_t *n) {
  if (id == 0 || id >= t->nents) return NULL;
  const char *s = text(t, &t->ents[id]);
  if (s && n) *n = t->ents[id].len;
  return s;
}

int asc_strtab_resident(const asc_strtab *t, uint32_t id) {
  return id == 0 || id >= t->nents || t->chunks[t->ents[id].chunk].p != NULL;
}

uint32_t asc_strtab_count(const asc_strtab *t) { return t->nents - 1; }

size_t asc_strtab_bytes(const asc_strtab *t) {
  size_t windows = 0;
  if (t->win)
    for (int w = 0; w < ASC_STRTAB_WINDOWS; w++) windows += t->win[w].cap;
  return t->chunk_bytes + (t->spare ? CHUNK_MOST : 0) + windows + (size_t)t->ents_cap * sizeof(entry) +
         t->nslots * sizeof(uint32_t) + (size_t)t->chunks_cap * sizeof(chunk);
}

int asc_strtab_length(const asc_strtab *t, uint32_t id, size_t *n) {
  if (id == 0 || id >= t->nents) return 0;
  const chunk *c = &t->chunks[t->ents[id].chunk];
  if (!c->p && c->fd < 0) return 0; /* freed by a drain */
  *n = t->ents[id].len;
  return 1;
}

int asc_strtab_drain(asc_strtab *to, asc_strtab *from, uint32_t *map) {
  free(from->slots); /* no lookups from here on */
  from->slots = NULL;
  from->nslots = 0;
  map[0] = 0;
  uint32_t freed = 0; /* chunks below this one are freed */
  char *back = NULL;  /* a spilled chunk, read back whole */
  size_t back_cap = 0;
  uint32_t back_of = UINT32_MAX;
  int rc = 0;
  for (uint32_t id = 1; id < from->nents && !rc; id++) {
    const entry *e = &from->ents[id];
    for (; freed < e->chunk; freed++) chunk_release(&from->chunks[freed]);
    const chunk *c = &from->chunks[e->chunk];
    const char *s = c->p ? c->p + e->off : NULL;
    if (!s && e->chunk != back_of) {
      if (c->used > back_cap) {
        free(back);
        back_cap = 0;
        if (!(back = malloc(c->used))) {
          rc = -1;
          break;
        }
        back_cap = c->used;
      }
      read_all(c->fd, back, c->used, c->off);
      back_of = e->chunk;
    }
    if (!s) s = back + e->off;
    rc = asc_strtab_intern(to, s, e->len, &map[id]);
  }
  free(back);
  for (; freed < from->nchunks; freed++) chunk_release(&from->chunks[freed]);
  for (uint32_t c = 0; c < from->nchunks; c++) from->chunks[c].fd = -1; /* no text to read back */
  from->chunk_bytes = 0;
  return rc;
}

uint32_t *asc_strtab_drain_map(asc_strtab *to, asc_strtab *from) {
  uint32_t *map = asc_alloc_array((size_t)asc_strtab_count(from) + 1, sizeof *map);
  if (map && asc_strtab_drain(to, from, map)) {
    free(map);
    return NULL;
  }
  return map;
}
