/* Worker processes: every item reported exactly once, with its result or with how its worker
 * ended (signal, exit code, status), whether the caller forks the workers or the zygote does
 * (once the caller has grown by 32 MiB), with a process per item or workers that do item after
 * item (until one fails, or has grown past the limit, or is killed while idle); the zygote
 * killed midway, SIGCHLD ignored by the caller, and signals interrupting the caller's system
 * calls change none of it; no descriptor and no child process is left behind. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ascope/par.h"
#include "ctest.h"

enum { OK, USR1, KILLED, EXIT5, RETURN3, KILL_ZYGOTE, GROW };

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
  long retire_kb;     /* asc_par_opts.retire_after_kb */
  size_t kill_at;     /* when this item is reported, its worker is killed (SIZE_MAX: none) */
  pid_t *pid;         /* the worker of each item, and its count of items done by then */
  int *seq;
} run;

/* The caller's forks and item sends made to fail on demand: defined here, these are the ones
 * the pool calls; they call the C library's. */
static pid_t test_caller;
static int forks_left = -1; /* forks the caller may still make (-1: any) */
static int send_fails_at;   /* the caller's item send of this number fails (0: none) */
static int item_sends;      /* the caller's item sends so far */
static int most_zombies;    /* the most ended, unreaped children the caller had at a report */

pid_t fork(void) {
  static pid_t (*real_fork)(void);
  if (!real_fork) *(void **)&real_fork = dlsym(RTLD_NEXT, "fork");
  if (getpid() == test_caller && forks_left >= 0) {
    if (forks_left == 0) {
      errno = EAGAIN;
      return -1;
    }
    forks_left--;
  }
  return real_fork();
}

ssize_t sendmsg(int sock, const struct msghdr *h, int flags) {
  static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
  if (!real_sendmsg) *(void **)&real_sendmsg = dlsym(RTLD_NEXT, "sendmsg");
  int item = h->msg_controllen > 0 && h->msg_iovlen == 1 && h->msg_iov[0].iov_len == sizeof(uint64_t);
  if (getpid() == test_caller && item && ++item_sends == send_fails_at) {
    errno = ENOBUFS;
    return -1;
  }
  return real_sendmsg(sock, h, flags);
}

/* The state letter of process pid ("Z": ended, not reaped), 0 when it cannot be read. */
static char proc_state(const char *pid) {
  char path[64], stat[256];
  snprintf(path, sizeof path, "/proc/%s/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t k = fread(stat, 1, sizeof stat - 1, f);
  fclose(f);
  stat[k] = '\0';
  const char *end = strrchr(stat, ')'); /* after the name, which may hold anything */
  return end && end[1] == ' ' ? end[2] : 0;
}

/* The caller's children that have ended and are not reaped yet. */
static int zombies(void) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  int count = 0;
  for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n")) count += proc_state(tok) == 'Z';
  return count;
}

static int items_done;      /* in a worker: the items it did before this one */
static char *volatile kept; /* in a worker: what GROW items allocated */

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
  int who[2] = {(int)getpid(), items_done++};
  if (write(fd, who, sizeof who) != (ssize_t)sizeof who) return 9;
  switch (what) {
  case USR1: raise(SIGUSR1); break; /* not SIGSEGV: a sanitizer would catch it and exit 1 */
  case KILLED: raise(SIGKILL); break;
  case EXIT5: _exit(5);
  case RETURN3: return 3;
  case KILL_ZYGOTE:
    if (getppid() != r->caller) kill(getppid(), SIGKILL);
    usleep(200000); /* ended with the zygote meanwhile */
    break;
  case GROW: { /* past the retirement limit: this worker leaves after the item */
    char *big = malloc(8 << 20);
    if (big) memset(big, 1, 8 << 20), memcpy(big, (const void *)&kept, sizeof kept);
    kept = big; /* kept: the worker's size is what counts */
    break;
  }
  }
  return 0;
}

/* Waits (up to 5 s) until process pid has ended: a zombie, its descriptors closed. */
static void await_end(pid_t pid) {
  char text[32];
  snprintf(text, sizeof text, "%d", (int)pid);
  for (int k = 0; k < 5000; k++) {
    char state = proc_state(text);
    if (!state || state == 'Z' || state == 'X') return;
    usleep(1000);
  }
}

static void done(void *ud, size_t i, const char *data, size_t len, int status, const asc_error *why,
                 int mapped) {
  (void)mapped;
  run *r = ud;
  r->seen[i]++;
  int z = zombies();
  if (z > most_zombies) most_zombies = z;
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
  int who[2] = {0, 0};
  if (status == 0 && len == (size_t)n + 1 + sizeof who) memcpy(who, data + 1 + n, sizeof who);
  r->pid[i] = who[0];
  r->seq[i] = who[1];
  if (i == r->kill_at && who[0] > 0) {
    kill(who[0], SIGKILL); /* idle now, waiting for its next item */
    await_end(who[0]);
  }
  int ok;
  switch (what) {
  case USR1: ok = status == -1 && strstr(why->msg, "signal 10") != NULL; break;
  case KILLED: ok = status == -1 && strstr(why->msg, "signal 9") != NULL; break;
  case EXIT5: ok = status == 5 && strstr(why->msg, "code 5") != NULL; break;
  case RETURN3: ok = status == 3; break;
  default: ok = status == 0 && len == (size_t)n + 1 + sizeof who && memcmp(data + 1, want, (size_t)n) == 0;
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

typedef struct {
  size_t grow_at;  /* the caller grows by 40 MiB when this item is reported (SIZE_MAX: never) */
  int want_zygote; /* 1: some workers must be the zygote's; 0: none; -1: either */
  long retire_kb;  /* 0: a process per item */
  int max_workers; /* the most processes the items may have run in (0: any) */
  int min_reuse;   /* some worker did at least this many items */
  size_t kill_at;  /* the worker of this item killed once it is reported (SIZE_MAX: none) */
} expect;

/* Runs nitems on jobs workers; 1 when every item was reported once as planned and as e says,
 * and no worker did an item after one that grew it past the limit. */
static int check_run(const int *plan, size_t nplan, size_t nitems, int jobs, expect e) {
  run r = {plan,
           nplan,
           calloc(nitems, sizeof(int)),
           0,
           0,
           e.grow_at,
           NULL,
           getpid(),
           0,
           e.retire_kb,
           e.kill_at,
           calloc(nitems, sizeof(pid_t)),
           calloc(nitems, sizeof(int))};
  for (size_t k = 0; k < nplan; k++) r.allow_stopped |= plan[k] == KILL_ZYGOTE;
  if (!r.seen || !r.pid || !r.seq) return 0;
  int fds = open_fds();
  asc_par_opts o = {ASC_PAR_ZYGOTE_AFTER_KB, e.retire_kb};
  asc_par_run_opts(nitems, jobs, &o, work, done, NULL, &r);
  int once = 1;
  for (size_t i = 0; i < nitems; i++) once &= r.seen[i] == 1;
  int ok = once && r.wrong == 0 && open_fds() == fds && no_children();
  if (e.want_zygote == 1) ok &= r.zygote_workers > 0;
  if (e.want_zygote == 0) ok &= r.zygote_workers == 0;
  int workers = 0, most = 0, late = 0;
  for (size_t i = 0; i < nitems; i++) {
    if (!r.pid[i]) continue;
    if (r.seq[i] + 1 > most) most = r.seq[i] + 1;
    if (r.seq[i] == 0) workers++;
    for (size_t k = 0; k < nitems; k++) /* after a GROW item its worker does none */
      late += plan[i % nplan] == GROW && r.pid[k] == r.pid[i] && r.seq[k] > r.seq[i];
  }
  if (e.max_workers) ok &= workers <= e.max_workers;
  ok &= most >= e.min_reuse && late == 0;
  if (!ok)
    fprintf(stderr, "once %d, wrong %d, zygote's %d, workers %d, most items %d, after growing %d\n", once,
            r.wrong, r.zygote_workers, workers, most, late);
  free(r.seen);
  free(r.grown);
  free(r.pid);
  free(r.seq);
  return ok;
}

static void on_alarm(int sig) { (void)sig; }

static void on_hang(int sig) {
  (void)sig;
  static const char msg[] = "FAIL spec/c/test_par.c: a run hung\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(1);
  _exit(1);
}

int main(void) {
  static const int fine[] = {OK};
  static const int mixed[] = {OK, OK, OK, USR1, KILLED, EXIT5, RETURN3};
  static const int kill_zygote[] = {OK, OK, OK, OK, OK, OK, OK, OK, OK, OK, KILL_ZYGOTE, OK};
  static const int kill_zygote_reused[] = {OK, OK, EXIT5, OK, OK, OK, OK, OK, OK, OK, KILL_ZYGOTE, OK};
  static const int grow[] = {OK, OK, GROW, OK, OK};
  const size_t never = SIZE_MAX;
  /* a process per item: a small caller forks its workers itself; once grown, the zygote does */
  CHECK(check_run(fine, 1, 300, 3, (expect){never, 0, 0, 300, 1, never}));
  CHECK(check_run(fine, 1, 300, 3, (expect){0, 1, 0, 300, 1, never}));
  CHECK(check_run(mixed, 7, 140, 3, (expect){never, 0, 0, 140, 1, never}));
  CHECK(check_run(mixed, 7, 140, 3, (expect){0, 1, 0, 140, 1, never}));
  CHECK(check_run(mixed, 7, 140, 16, (expect){0, 1, 0, 140, 1, never}));
  /* the zygote killed by an item: the items its workers held may fail, every item is reported
   * once, and the rest run in workers the caller forks */
  CHECK(check_run(kill_zygote, 12, 60, 3, (expect){0, 1, 0, 60, 1, never}));
  /* workers doing item after item: three processes for 300 items; one that failed an item is
   * replaced (by the zygote once the caller has grown); one grown past the limit leaves after
   * the item; one killed while idle is replaced and no item fails for it. With the mixed plan
   * whether a worker does two fine items in a row depends on how fast the others start (each
   * fine item may find a worker of its own), so there only the count of workers is bounded. */
  const long keep = ASC_PAR_RETIRE_AFTER_KB;
  CHECK(check_run(fine, 1, 300, 3, (expect){0, 0, keep, 3, 20, never}));
  CHECK(check_run(mixed, 7, 140, 3, (expect){never, 0, keep, 3 + 80, 1, never}));
  CHECK(check_run(mixed, 7, 140, 3, (expect){0, 1, keep, 3 + 80, 1, never}));
  CHECK(check_run(kill_zygote_reused, 12, 60, 3, (expect){0, -1, keep, 3 + 10, 2, never}));
  CHECK(check_run(grow, 5, 100, 3, (expect){never, 0, 4 * 1024, 3 + 20, 2, never}));
  CHECK(check_run(fine, 1, 100, 3, (expect){never, 0, keep, 4, 2, 10}));
  CHECK(check_run(fine, 1, 100, 3, (expect){0, -1, keep, 4, 2, 10}));
  /* the caller ignores SIGCHLD: its workers and the zygote's are still reaped and named by how
   * they ended, and the caller ignores it again after the run */
  signal(SIGCHLD, SIG_IGN);
  CHECK(check_run(mixed, 7, 70, 3, (expect){never, 0, 0, 70, 1, never}));
  CHECK(check_run(mixed, 7, 70, 3, (expect){0, 1, 0, 70, 1, never}));
  CHECK(check_run(mixed, 7, 70, 3, (expect){0, 1, keep, 3 + 40, 1, never}));
  CHECK(check_run(fine, 1, 100, 3, (expect){0, -1, keep, 3, 20, never}));
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
  int interrupted = check_run(mixed, 7, 140, 3, (expect){0, 1, 0, 140, 1, never});
  int interrupted_reused = check_run(mixed, 7, 140, 3, (expect){0, 1, keep, 3 + 80, 1, never});
  int interrupted_fine = check_run(fine, 1, 100, 3, (expect){0, -1, keep, 3, 20, never});
  setitimer(ITIMER_REAL, &off, NULL);
  CHECK(interrupted);
  CHECK(interrupted_reused);
  CHECK(interrupted_fine);
  /* the system refuses more processes: the worker left idle takes every item after the first
   * (whose worker left); a send of an item that fails (to a new worker or an idle one) hangs
   * nothing and fails no item; workers that left are reaped as the run goes (a process per item
   * here: at the process limit, zombies count) */
  static int first_fails[20] = {RETURN3};
  /* a hang ends the test (not by SIGALRM: one the timer above raised may still be pending) */
  struct sigaction hang;
  memset(&hang, 0, sizeof hang);
  hang.sa_handler = on_hang;
  sigaction(SIGUSR2, &hang, NULL);
  timer_t watchdog;
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_SIGNAL;
  ev.sigev_signo = SIGUSR2;
  struct itimerspec in_120s = {{0, 0}, {120, 0}};
  CHECK(timer_create(CLOCK_MONOTONIC, &ev, &watchdog) == 0 &&
        timer_settime(watchdog, 0, &in_120s, NULL) == 0);
  test_caller = getpid();
  forks_left = 3; /* the zygote and two workers */
  CHECK(check_run(first_fails, 20, 20, 2, (expect){never, 0, keep, 2, 10, never}));
  forks_left = -1;
  send_fails_at = 1;
  item_sends = 0;
  CHECK(check_run(fine, 1, 20, 2, (expect){never, 0, keep, 4, 2, never}));
  send_fails_at = 7;
  item_sends = 0;
  CHECK(check_run(fine, 1, 20, 2, (expect){never, 0, keep, 4, 2, never}));
  send_fails_at = 0;
  most_zombies = 0;
  CHECK(check_run(fine, 1, 200, 2, (expect){never, 0, 0, 200, 1, never}));
  CHECK(most_zombies <= 10); /* 200 had the workers that left been reaped at the end only */
  timer_delete(watchdog);
  CTEST_END();
}
