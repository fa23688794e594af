/* Atomic output files and a sorted, depth-first directory walk. */
#include "ascope/fs.h"
#include "ascope/checked.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int asc_mkdirs(const char *path, asc_error *err) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0) return 0;
  if (n >= sizeof buf) return asc_fail(err, path, -1, 0, 0, "path too long");
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char c = buf[i];
      buf[i] = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return asc_fail(err, buf, -1, 0, 0, "cannot create folder: %s", strerror(errno));
      buf[i] = c;
    }
  }
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return asc_fail(err, path, -1, 0, 0, "not a folder");
  return 0;
}

/* The temporary files open in this process. A signal handler must find them without help, so
 * this list is the one piece of global state; changes to it are made with the cleanup signals
 * blocked, so the handler never sees half a link. */
static asc_atomic *open_files;
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void list_change(asc_atomic *a, int add) {
  sigset_t block, old;
  sigemptyset(&block);
  for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
    sigaddset(&block, cleanup_signals[i]);
  sigprocmask(SIG_BLOCK, &block, &old);
  if (add) {
    a->prev = NULL;
    a->next = open_files;
    if (open_files) open_files->prev = a;
    open_files = a;
  } else {
    if (a->prev)
      a->prev->next = a->next;
    else if (open_files == a)
      open_files = a->next;
    if (a->next) a->next->prev = a->prev;
    a->next = a->prev = NULL;
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
}

static void cleanup_and_die(int sig) {
  for (asc_atomic *a = open_files; a; a = a->next) unlink(a->tmp);
  signal(sig, SIG_DFL);
  raise(sig);
}

void asc_atomic_cleanup_on_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = cleanup_and_die;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++) {
    struct sigaction old;
    /* a signal the caller ignores (nohup, a background job) stays ignored */
    if (sigaction(cleanup_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(cleanup_signals[i], &sa, NULL);
  }
}

int asc_atomic_write(asc_atomic *a, const void *s, size_t n) {
  if (a->err_no) return -1;
  if (n && fwrite(s, 1, n, a->f) != n) {
    a->err_no = errno ? errno : EIO;
    return -1;
  }
  return 0;
}

int asc_atomic_open(asc_atomic *a, const char *path, asc_error *err) {
  a->f = NULL;
  a->err_no = 0;
  a->next = a->prev = NULL;
  if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path ||
      snprintf(a->tmp, sizeof a->tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof a->tmp)
    return asc_fail(err, path, -1, 0, 0, "path too long");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = '\0';
    if (asc_mkdirs(dir, err)) return -1;
  }
  int fd = mkstemp(a->tmp);
  if (fd < 0) return asc_fail(err, path, -1, 0, 0, "cannot create: %s", strerror(errno));
  fchmod(fd, 0644);
  a->f = fdopen(fd, "wb");
  if (!a->f) {
    close(fd);
    unlink(a->tmp);
    return asc_fail(err, path, -1, 0, 0, "cannot open: %s", strerror(errno));
  }
  setvbuf(a->f, NULL, _IOFBF, 1 << 20);
  list_change(a, 1);
  return 0;
}

int asc_atomic_commit(asc_atomic *a, asc_error *err) {
  if (!a->f) return asc_fail(err, a->path, -1, 0, 0, "not open");
  int e = a->err_no;
  errno = 0;
  if (!e && fflush(a->f) != 0) e = errno ? errno : EIO;
  if (!e && ferror(a->f)) e = EIO;
  if (fclose(a->f) != 0 && !e) e = errno ? errno : EIO;
  a->f = NULL;
  if (!e && rename(a->tmp, a->path) != 0) {
    e = errno;
    unlink(a->tmp);
    list_change(a, 0);
    return asc_fail(err, a->path, -1, 0, 0, "cannot rename into place: %s", strerror(e));
  }
  if (e) unlink(a->tmp);
  list_change(a, 0);
  if (e) return asc_fail(err, a->path, -1, 0, 0, "cannot write: %s (nothing written)", strerror(e));
  return 0;
}

void asc_atomic_abort(asc_atomic *a) {
  if (a->f) {
    fclose(a->f);
    a->f = NULL;
    unlink(a->tmp);
    list_change(a, 0);
  }
}

int asc_open_input_fd(const char *path, asc_error *err) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return asc_fail(err, path, -1, 0, 0, "cannot open: %s", strerror(errno)), -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int dir = S_ISDIR(st.st_mode);
    close(fd);
    return asc_fail(err, path, -1, 0, 0,
                    dir ? "is a folder, not a file"
                        : "not a regular file (a FIFO, device or socket): not read"),
           -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

FILE *asc_open_input(const char *path, asc_error *err) {
  int fd = asc_open_input_fd(path, err);
  if (fd < 0) return NULL;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    asc_fail(err, path, -1, 0, 0, "cannot open: %s", strerror(errno));
    close(fd);
  }
  return f;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A folder or entry the walk could not read: reported through fn, the walk goes on. */
static int unreadable(int (*fn)(void *, const char *, int), void *ud, asc_error *err, const char *path,
                      const char *why) {
  asc_fail_text(err, path, -1, 0, 0, why);
  char msg[sizeof err->msg + 8];
  asc_error_format(err, msg, sizeof msg);
  return fn(ud, msg, ASC_WALK_UNREADABLE);
}

static int walk(char *path, size_t len, int (*fn)(void *, const char *, int), void *ud, asc_error *err,
                int depth) {
  if (depth > 64) return unreadable(fn, ud, err, path, "folders nested more than 64 deep are not read");
  DIR *d = opendir(path);
  if (!d) return unreadable(fn, ud, err, path, strerror(errno));
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 32;
      char **nn = asc_realloc_array(names, cap, sizeof *nn);
      if (!nn) break;
      names = nn;
    }
    if (!(names[n] = strdup(de->d_name))) break;
    n++;
  }
  int rc = de ? unreadable(fn, ud, err, path, "out of memory listing the folder") : 0;
  closedir(d);
  if (n > 1) qsort(names, n, sizeof *names, by_name);
  for (size_t i = 0; i < n && rc == 0; i++) {
    size_t nl = strlen(names[i]);
    if (len + 1 + nl + 1 > 4096) {
      rc = unreadable(fn, ud, err, path, "a name in this folder makes a path longer than 4096 bytes");
      continue;
    }
    path[len] = '/';
    memcpy(path + len + 1, names[i], nl + 1);
    struct stat st;
    if (lstat(path, &st) != 0) {
      rc = unreadable(fn, ud, err, path, strerror(errno));
      path[len] = '\0';
      continue;
    }
    if (S_ISLNK(st.st_mode) && stat(path, &st) != 0) { /* a dangling link holds no data */
      rc = fn(ud, path, ASC_WALK_OTHER);
      path[len] = '\0';
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      int is_link = 0;
      struct stat lst;
      if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) is_link = 1;
      rc = fn(ud, path, 1);
      if (rc == 0 && !is_link) rc = walk(path, len + 1 + nl, fn, ud, err, depth + 1);
    } else if (S_ISREG(st.st_mode)) {
      rc = fn(ud, path, 0);
    } else {
      rc = fn(ud, path, ASC_WALK_OTHER);
    }
    path[len] = '\0';
  }
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
  return rc;
}

int asc_walk(const char *root, int (*fn)(void *, const char *, int), void *ud, asc_error *err) {
  char path[4096];
  size_t len = strlen(root);
  if (len >= sizeof path) return asc_fail(err, root, -1, 0, 0, "path too long");
  memcpy(path, root, len + 1);
  while (len > 1 && path[len - 1] == '/') path[--len] = '\0';
  struct stat st;
  if (stat(path, &st) != 0) return asc_fail(err, root, -1, 0, 0, "%s", strerror(errno));
  if (!S_ISDIR(st.st_mode)) return fn(ud, path, 0);
  return walk(path, len, fn, ud, err, 0);
}

int asc_cpu_count(void) {
  /* the CPUs this process may run on (taskset, cgroup cpusets, Slurm's binding), not the
   * machine's: a job given two of 64 cores must not start 64 workers */
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* procs_running of /proc/stat: the threads runnable right now, the caller included; -1 when
 * it cannot be read */
static long procs_running(void) {
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return -1;
  char line[256];
  long running = -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "procs_running ", 14) == 0) {
      running = strtol(line + 14, NULL, 10);
      break;
    }
  }
  fclose(f);
  return running;
}

int asc_cpu_free(void) {
  int cpus = asc_cpu_count();
  /* The fewest runnable threads of up to three looks half a millisecond apart, kept for 100 ms.
   * One look took a kernel thread runnable for a moment (RCU, a kworker, a vCPU the host held
   * back) for a busy CPU: on an idle 2-core VM a scan of 1 GiB ran on one thread in half of the
   * runs, 0.85 s instead of 0.44 s. A process that keeps a CPU is runnable at every look. An
   * idle machine answers at the first look; the kept answer bounds the cost where it is busy.
   * A forked worker looks again: its siblings, started since, are load. */
  static _Atomic long long kept_at; /* ms on the monotonic clock + 1; 0: nothing kept */
  static _Atomic long kept;
  static _Atomic pid_t kept_by;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  long long ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
  long long at = atomic_load(&kept_at);
  pid_t self = getpid();
  long running;
  if (at && ms + 1 - at < 100 && atomic_load(&kept_by) == self) {
    running = atomic_load(&kept);
  } else {
    running = procs_running();
    for (int k = 1; k < 3 && running > 1; k++) {
      nanosleep(&(struct timespec){0, 500000}, NULL);
      long r = procs_running();
      if (r >= 1 && r < running) running = r;
    }
    atomic_store(&kept, running);
    atomic_store(&kept_by, self);
    atomic_store(&kept_at, ms + 1);
  }
  if (running < 1) return cpus;
  long others = running - 1, free_ = (long)cpus - others;
  return free_ < 1 ? 1 : free_ > cpus ? cpus : (int)free_;
}

typedef struct {
  size_t at; /* offset in the buffer */
} hit;

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

int asc_grep(const char *path, const char *const *literals, size_t nlit,
             int (*fn)(void *ud, long long line, const char *text, size_t len), void *ud, asc_error *err) {
  FILE *f = asc_open_input(path, err);
  if (!f) return -1;
  size_t cap = 1 << 22, have = 0, hcap = 1024;
  char *buf = malloc(cap);
  size_t *hits = asc_alloc_array(hcap, sizeof *hits);
  int rc = 0;
  long long line = 1; /* line number of buf[0] */
  if (!buf || !hits) {
    rc = asc_fail(err, path, -1, 0, 0, "out of memory");
    goto done;
  }
  for (;;) {
    size_t n = fread(buf + have, 1, cap - have, f);
    int eof = n == 0;
    have += n;
    if (eof && ferror(f)) {
      rc = asc_fail(err, path, -1, 0, 0, "read error: %s", strerror(errno));
      goto done;
    }
    /* complete lines only, unless the file ends */
    size_t end = have;
    if (!eof) {
      char *nl = memrchr(buf, '\n', have);
      if (!nl) {
        if (have == cap) { /* one line longer than the buffer: grow */
          char *nb = realloc(buf, cap * 2);
          if (!nb) {
            rc = asc_fail(err, path, -1, 0, 0, "out of memory");
            goto done;
          }
          buf = nb;
          cap *= 2;
        }
        continue;
      }
      end = (size_t)(nl - buf) + 1;
    }
    /* every match of every literal, as offsets of their line starts */
    size_t nh = 0;
    for (size_t k = 0; k < nlit; k++) {
      size_t ll = strlen(literals[k]);
      const char *p = buf, *stop = buf + end;
      while (ll && p < stop && (p = memmem(p, (size_t)(stop - p), literals[k], ll)) != NULL) {
        const char *ls = p;
        while (ls > buf && ls[-1] != '\n') ls--;
        if (nh == hcap) {
          size_t *nhits = asc_realloc_array(hits, hcap * 2, sizeof *hits);
          if (!nhits) {
            rc = asc_fail(err, path, -1, 0, 0, "out of memory");
            goto done;
          }
          hits = nhits;
          hcap *= 2;
        }
        hits[nh++] = (size_t)(ls - buf);
        const char *le = memchr(p, '\n', (size_t)(stop - p));
        p = le ? le + 1 : stop; /* one hit per line and literal */
      }
    }
    if (nh > 1) qsort(hits, nh, sizeof *hits, cmp_size);
    size_t pos = 0;
    for (size_t i = 0; i < nh && rc == 0; i++) {
      if (i > 0 && hits[i] == hits[i - 1]) continue;
      for (const char *q = buf + pos; (q = memchr(q, '\n', (size_t)(buf + hits[i] - q))) != NULL; q++) line++;
      pos = hits[i];
      const char *le = memchr(buf + pos, '\n', end - pos);
      size_t len = (size_t)((le ? le : buf + end) - (buf + pos));
      if (len && buf[pos + len - 1] == '\r') len--;
      if (fn(ud, line, buf + pos, len)) rc = 1;
    }
    for (const char *q = buf + pos; (q = memchr(q, '\n', (size_t)(buf + end - q))) != NULL; q++) line++;
    memmove(buf, buf + end, have - end);
    have -= end;
    if (eof || rc) break;
  }
done:
  free(buf);
  free(hits);
  fclose(f);
  return rc < 0 ? -1 : 0;
}
