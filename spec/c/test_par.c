/* Worker processes: every item reported exactly once, with its result or with how its worker
 * ended (signal, exit code, status), whether the caller forks the workers or the zygote does
 * (once the caller has grown by 32 MiB); the zygote killed midway, SIGCHLD ignored by the
 * caller, and signals interrupting the caller's system calls change none of it; no descriptor
 * and no child process is left behind. */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "ascope/par.h"
#include "ctest.h"

enum { OK, USR1, KILLED, EXIT5, RETURN3, KILL_ZYGOTE };

typedef struct {
  const int *plan; /* what item i does, plan[i % nplan] */
  size_t nplan;
  int *seen;         /* reports per item */
  int wrong;         /* reports that were not what the plan says */
  int allow_stopped; /* a worker ended with the zygote may be reported as stopped */
  size_t grow_at;    /* the caller grows by 40 MiB when this item is reported (SIZE_MAX: never) */
  char *grown;
  pid_t caller;
  int zygote_workers; /* items whose worker was not the caller's child */
} run;

static int work(void *ud, size_t i, int fd) {
  run *r = ud;
  int what = r->plan[i % r->nplan];
  if (getppid() != r->caller) {
    if (write(fd, "Z", 1) != 1) return 9;
  } else if (write(fd, "C", 1) != 1)
    return 9;
  char buf[32];
  int n = snprintf(buf, sizeof buf, "item %zu", i);
  if (write(fd, buf, (size_t)n) != n) return 9;
  switch (what) {
  case USR1: raise(SIGUSR1); break; /* not SIGSEGV: a sanitizer would catch it and exit 1 */
  case KILLED: raise(SIGKILL); break;
  case EXIT5: _exit(5);
  case RETURN3: return 3;
  case KILL_ZYGOTE:
    if (getppid() != r->caller) kill(getppid(), SIGKILL);
    usleep(200000); /* ended with the zygote meanwhile */
    break;
  }
  return 0;
}

static void done(void *ud, size_t i, const char *data, size_t len, int status, const asc_error *why,
                 int mapped) {
  (void)mapped;
  run *r = ud;
  r->seen[i]++;
  if (i == r->grow_at) {
    r->grown = malloc(40 << 20);
    if (r->grown) memset(r->grown, 1, 40 << 20);
  }
  int what = r->plan[i % r->nplan];
  if (what == KILL_ZYGOTE) return; /* ended with the zygote, or done (forked by the caller) */
  if (r->allow_stopped && status == -1 && strstr(why->msg, "stopped before finishing")) return;
  if (len > 0 && data[0] == 'Z') r->zygote_workers++;
  char want[32];
  int n = snprintf(want, sizeof want, "item %zu", i);
  int ok;
  switch (what) {
  case USR1: ok = status == -1 && strstr(why->msg, "signal 10") != NULL; break;
  case KILLED: ok = status == -1 && strstr(why->msg, "signal 9") != NULL; break;
  case EXIT5: ok = status == 5 && strstr(why->msg, "code 5") != NULL; break;
  case RETURN3: ok = status == 3; break;
  default: ok = status == 0 && len == (size_t)n + 1 && memcmp(data + 1, want, (size_t)n) == 0;
  }
  if (!ok) {
    r->wrong++;
    fprintf(stderr, "item %zu: status %d, %zu bytes, '%s'\n", i, status, len, why ? why->msg : "");
  }
}

static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  if (!d) return -1;
  while (readdir(d)) n++;
  closedir(d);
  return n;
}

static int no_children(void) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
  FILE *f = fopen(path, "r");
  if (!f) return 1; /* not on this kernel: nothing to check */
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return n == 0;
}

/* Runs nitems on jobs workers; 1 when every item was reported once as planned. The caller
 * grows by 40 MiB when item grow_at is reported; want_zygote: some workers must then be the
 * zygote's (else none). */
static int check_run(const int *plan, size_t nplan, size_t nitems, int jobs, size_t grow_at,
                     int want_zygote) {
  run r = {plan, nplan, calloc(nitems, sizeof(int)), 0, 0, grow_at, NULL, getpid(), 0};
  for (size_t k = 0; k < nplan; k++) r.allow_stopped |= plan[k] == KILL_ZYGOTE;
  if (!r.seen) return 0;
  int fds = open_fds();
  asc_par_run(nitems, jobs, work, done, NULL, &r);
  int once = 1;
  for (size_t i = 0; i < nitems; i++) once &= r.seen[i] == 1;
  int ok = once && r.wrong == 0 && open_fds() == fds && no_children();
  if (want_zygote) ok &= r.zygote_workers > 0;
  if (!want_zygote) ok &= r.zygote_workers == 0;
  free(r.seen);
  free(r.grown);
  return ok;
}

static void on_alarm(int sig) { (void)sig; }

int main(void) {
  static const int fine[] = {OK};
  static const int mixed[] = {OK, OK, OK, USR1, KILLED, EXIT5, RETURN3};
  static const int kill_zygote[] = {OK, OK, OK, OK, OK, OK, OK, OK, OK, OK, KILL_ZYGOTE, OK};
  /* a small caller forks its workers itself; once grown, the zygote does */
  CHECK(check_run(fine, 1, 300, 3, SIZE_MAX, 0));
  CHECK(check_run(fine, 1, 300, 3, 0, 1));
  CHECK(check_run(mixed, 7, 140, 3, SIZE_MAX, 0));
  CHECK(check_run(mixed, 7, 140, 3, 0, 1));
  CHECK(check_run(mixed, 7, 140, 16, 0, 1));
  /* the zygote killed by an item: the items its workers held may fail, every item is reported
   * once, and the rest run in workers the caller forks */
  CHECK(check_run(kill_zygote, 12, 60, 3, 0, 1));
  /* the caller ignores SIGCHLD: its workers and the zygote's are still reaped and named by how
   * they ended, and the caller ignores it again after the run */
  signal(SIGCHLD, SIG_IGN);
  CHECK(check_run(mixed, 7, 70, 3, SIZE_MAX, 0));
  CHECK(check_run(mixed, 7, 70, 3, 0, 1));
  struct sigaction now;
  CHECK(sigaction(SIGCHLD, NULL, &now) == 0 && now.sa_handler == SIG_IGN);
  signal(SIGCHLD, SIG_DFL);
  /* a signal every 200 us without SA_RESTART: the caller's calls are interrupted throughout */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval every = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &every, NULL);
  int interrupted = check_run(mixed, 7, 140, 3, 0, 1);
  setitimer(ITIMER_REAL, &off, NULL);
  CHECK(interrupted);
  CTEST_END();
}
