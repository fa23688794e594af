/* File-system helpers: atomic file output, directory walking, CPU count. */
#ifndef ASCOPE_FS_H
#define ASCOPE_FS_H

#include <stdio.h>

#include "ascope/error.h"

typedef struct asc_atomic {
  FILE *f;
  int err_no;                     /* the first write error, kept for the message at commit */
  struct asc_atomic *next, *prev; /* open temporary files, removed on SIGINT/SIGTERM/SIGHUP */
  char path[4096];
  char tmp[4096];
} asc_atomic;

/* Open a temporary file in the target's folder (created when missing). */
int asc_atomic_open(asc_atomic *a, const char *path, asc_error *err);
/* The one write path of every output file: -1 (and the error kept) when not all n bytes went
 * out; later writes are skipped. */
int asc_atomic_write(asc_atomic *a, const void *s, size_t n);
/* Flush, close and rename over the target. On any failure (a write, the flush, the close: a
 * full disk shows at any of them) the temporary file is removed and the error names the file. */
int asc_atomic_commit(asc_atomic *a, asc_error *err);
void asc_atomic_abort(asc_atomic *a);
/* For executables: on SIGINT, SIGTERM or SIGHUP remove the temporary files still open, then
 * die of the signal as before. A library embedded in a host installs no handler. */
void asc_atomic_cleanup_on_signals(void);

/* Open an input file for reading. Only regular files are inputs: a FIFO, a device or a socket
 * is refused at once (opening one must not block, reading one must not run forever), with a
 * message naming it. The "rb" FILE, or NULL with err filled. */
FILE *asc_open_input(const char *path, asc_error *err);
/* The same as a descriptor (-1 on failure). */
int asc_open_input_fd(const char *path, asc_error *err);

/* mkdir -p */
int asc_mkdirs(const char *path, asc_error *err);

/* Calls fn for every regular file below root (sorted by name within each folder, depth first,
 * not following links to folders); is_dir is 1 for folders. A folder or entry that cannot be
 * read is not skipped in silence: fn gets is_dir = ASC_WALK_UNREADABLE with a message naming it
 * instead of a path, and the walk goes on. fn returns non-zero to stop. Devices, FIFOs, sockets
 * and links to nothing are not files here: fn gets them with is_dir = ASC_WALK_OTHER, so that
 * the walk also gives every folder's complete listing (a caller after files skips them). */
#define ASC_WALK_UNREADABLE 2
#define ASC_WALK_OTHER 3
int asc_walk(const char *root, int (*fn)(void *ud, const char *path, int is_dir), void *ud, asc_error *err);

int asc_cpu_count(void);
/* The CPUs of asc_cpu_count not taken by other runnable threads (at least 1): how many workers
 * help rather than queue behind a busy machine. A thread counts when it is runnable at each of
 * up to three looks half a millisecond apart; the answer is kept for 100 ms. */
int asc_cpu_free(void);

/* Stream a text file and call fn for every line that contains at least one of the literals
 * (line numbers from 1; the line without its end of line). Lines of any length; fn returns
 * non-zero to stop. The literals are searched with memmem over whole buffers, so files of
 * gigabytes where few lines match are read at memory speed. */
int asc_grep(const char *path, const char *const *literals, size_t nlit,
             int (*fn)(void *ud, long long line, const char *text, size_t len), void *ud, asc_error *err);

#endif
