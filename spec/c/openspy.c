/* An LD_PRELOAD shim for the specs: every open(2)-family call and fopen(3) of the process appends
 * "r <path>" (opened for reading only) or "w <path>" (for writing, or reading and writing) as one
 * line to the file named by OPENSPY_LOG, and every opendir(3) "d <path>" (a folder listed: glibc
 * opens it with an internal call that an open shim does not see), then does the real call. The
 * log is opened with the real open, so its own writes are not logged; each line is one write(2)
 * to an O_APPEND file, so the lines of forked workers do not interleave. Without OPENSPY_LOG the
 * shim only passes calls on. */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef FILE *(*fopen_fn)(const char *, const char *);
typedef DIR *(*opendir_fn)(const char *);

static void *real(const char *name) { return dlsym(RTLD_NEXT, name); }

static void note_as(const char *path, char kind) {
  const char *logname = getenv("OPENSPY_LOG");
  if (!logname || !*logname || !path) return;
  open_fn o = (open_fn)real("open");
  if (!o) return;
  int fd = o(logname, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[8192];
  int n = snprintf(line, sizeof line, "%c %s\n", kind, path);
  if (n > 0 && (size_t)n < sizeof line) {
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
  }
  close(fd);
}

static void note(const char *path, int writes) { note_as(path, writes ? 'w' : 'r'); }

static int flag_writes(int flags) { return (flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT); }
static int mode_writes(const char *mode) {
  return mode && (strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+'));
}

static mode_t mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

/* open, open64, openat and openat64: note the path, then the real call (with the mode when the
 * flags say there is one). The variadic arguments are the leading directory parameter of the *at
 * calls, empty for the others; SPY_DIR_<type> passes it on. */
#define SPY_OPEN(name, fn_type, ...)                                                                         \
  int name(__VA_ARGS__ const char *path, int flags, ...) {                                                   \
    va_list ap;                                                                                              \
    va_start(ap, flags);                                                                                     \
    mode_t mode = mode_arg(flags, ap);                                                                       \
    va_end(ap);                                                                                              \
    note(path, flag_writes(flags));                                                                          \
    fn_type f = (fn_type)real(#name);                                                                        \
    return f ? f(SPY_DIR_##fn_type path, flags, mode) : -1;                                                  \
  }
#define SPY_DIR_open_fn
#define SPY_DIR_openat_fn dir,
SPY_OPEN(open, open_fn, )
SPY_OPEN(open64, open_fn, )
SPY_OPEN(openat, openat_fn, int dir, )
SPY_OPEN(openat64, openat_fn, int dir, )

FILE *fopen(const char *path, const char *mode) {
  note(path, mode_writes(mode));
  fopen_fn f = (fopen_fn)real("fopen");
  return f ? f(path, mode) : NULL;
}

FILE *fopen64(const char *path, const char *mode) {
  note(path, mode_writes(mode));
  fopen_fn f = (fopen_fn)real("fopen64");
  return f ? f(path, mode) : NULL;
}

DIR *opendir(const char *path) {
  note_as(path, 'd');
  opendir_fn f = (opendir_fn)real("opendir");
  return f ? f(path) : NULL;
}
