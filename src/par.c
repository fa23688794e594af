/* fork + poll: workers inherit the parent's whole state, so per-item work needs no setup, and
 * a crash in one worker cannot corrupt the parent or the other items.
 *
 * A worker writes its result into an anonymous in-memory file (memfd) that the parent maps
 * once the worker is done: a worker never waits for the parent to drain a pipe, and the parent
 * neither copies nor grows a buffer for results of tens of megabytes. Through a pipe the worker
 * sends one status byte when its result is complete, so the parent can use the result while
 * the worker's memory is torn down; end of file without that byte means the worker died. */
#include "ascope/par.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  pid_t pid;
  int fd;  /* read end of the pipe: the status byte, or end of file when the worker died */
  int out; /* the result file */
  size_t item;
} worker;

/* An anonymous file for a result: memfd, or an unlinked temporary file where there is none. */
static int result_file(void) {
  int fd = memfd_create("ascope-par", MFD_CLOEXEC);
  if (fd >= 0) return fd;
  FILE *f = tmpfile();
  if (!f) return -1;
  fd = dup(fileno(f));
  fclose(f);
  return fd;
}

/* Hands the result bytes to done: mapped, or read when the file cannot be mapped. */
static void deliver(worker *w, int status, const asc_error *why, asc_par_done done, void *ud) {
  struct stat st;
  size_t n = fstat(w->out, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
  if (!n) {
    done(ud, w->item, NULL, 0, status, why, 0);
    return;
  }
  void *map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, w->out, 0);
  if (map != MAP_FAILED) {
    done(ud, w->item, map, n, status, why, 1);
    munmap(map, n);
    return;
  }
  char *buf = malloc(n);
  size_t got = 0;
  while (buf && got < n) {
    ssize_t r = pread(w->out, buf + got, n - got, (off_t)got);
    if (r <= 0 && !(r < 0 && errno == EINTR)) break;
    if (r > 0) got += (size_t)r;
  }
  if (buf && got == n)
    done(ud, w->item, buf, n, status, why, 0);
  else if (status)
    done(ud, w->item, NULL, 0, status, why, 0);
  else {
    asc_error e;
    asc_fail(&e, NULL, -1, 0, 0, "cannot read the worker's result");
    done(ud, w->item, NULL, 0, -1, &e, 0);
  }
  free(buf);
}

/* The worker is done: code is the status byte it sent, or -1 when it sent none (it crashed or
 * left without finishing the item: its exit status tells how). */
static void finish(worker *w, int code, asc_par_done done, void *ud) {
  asc_error why;
  asc_fail_text(&why, NULL, -1, 0, 0, "");
  int status = code;
  if (code < 0) {
    int st = 0;
    while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {
    }
    w->pid = 0; /* reaped */
    status = -1;
    if (WIFSIGNALED(st))
      asc_fail(&why, NULL, -1, 0, 0, "worker killed by signal %d (%s)", WTERMSIG(st),
               strsignal(WTERMSIG(st)));
    else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
      status = WEXITSTATUS(st);
    else
      asc_fail(&why, NULL, -1, 0, 0, "worker stopped before finishing its item");
  }
  if (status > 0) asc_fail(&why, NULL, -1, 0, 0, "worker exited with code %d", status);
  deliver(w, status, &why, done, ud);
  close(w->fd);
  close(w->out);
}

/* Workers the system allows: each holds two descriptors in the parent (its pipe and its result
 * file) and briefly a third while it starts; a quarter of the open-file limit stays for the
 * caller's own files. */
int asc_par_max_jobs(void) {
  struct rlimit rl;
  long long fit = ASC_PAR_MAX_JOBS;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    long long spare = (long long)rl.rlim_cur - (long long)rl.rlim_cur / 4 - 16;
    if (spare / 3 < fit) fit = spare / 3;
  }
  return fit < 1 ? 1 : (int)fit;
}

int asc_par_run(size_t nitems, int jobs, asc_par_work work, asc_par_done done, asc_par_self self, void *ud) {
  int fit = asc_par_max_jobs();
  if (jobs > fit) jobs = fit;
  if ((size_t)jobs > nitems) jobs = nitems ? (int)nitems : 1;
  if (jobs < 1) jobs = 1;
  worker *ws = calloc((size_t)jobs, sizeof *ws);
  struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
  pid_t *gone = calloc(nitems + 1, sizeof *gone); /* finished workers, reaped at the end */
  size_t ngone = 0;
  if (!ws || !pf || !gone) {
    free(ws);
    free(pf);
    free(gone);
    asc_error e;
    asc_fail(&e, NULL, -1, 0, 0, "out of memory");
    for (size_t i = 0; i < nitems; i++) done(ud, i, NULL, 0, -1, &e, 0);
    return -1;
  }
  for (int j = 0; j < jobs; j++) ws[j].fd = ws[j].out = -1;
  int here = self && nitems > 1 && nitems <= (size_t)jobs; /* item 0 is the parent's */
  size_t next = here ? 1 : 0, running = 0;
  int rc = 0;
  fflush(NULL); /* buffered output must not be written twice by the children */
  pid_t parent = getpid();
  while (next < nitems || running > 0) {
    for (int j = 0; j < jobs && next < nitems; j++) {
      if (ws[j].fd >= 0) continue;
      int p[2] = {-1, -1}, out = result_file();
      pid_t pid = -1;
      if (out >= 0 && pipe(p) == 0 && (pid = fork()) < 0) close(p[0]), close(p[1]);
      if (pid < 0) {
        if (out >= 0) close(out);
        if (running > 0) break; /* the system has no room for another: start it when one ends */
        /* not even one worker: report what is left */
        asc_error e;
        asc_fail(&e, NULL, -1, 0, 0, "cannot start a worker process");
        for (; next < nitems; next++) done(ud, next, NULL, 0, -1, &e, 0);
        rc = -1;
        break;
      }
      if (pid == 0) {
        close(p[0]);
        signal(SIGPIPE, SIG_DFL);
        /* a worker ends with its parent (killed or interrupted alone): SIGTERM lets it remove
         * its own temporary files first */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(1);
        int code = work(ud, next, out);
        fflush(NULL);
        /* the result is complete: the parent may use it while this process is torn down */
        unsigned char byte = (unsigned char)code;
        if (write(p[1], &byte, 1) != 1) code = 2;
        _exit(code);
      }
      close(p[1]);
      ws[j] = (worker){pid, p[0], out, next};
      next++;
      running++;
    }
    if (here) {
      here = 0;
      self(ud, 0);
    }
    int k = 0;
    for (int j = 0; j < jobs; j++) {
      pf[j].fd = ws[j].fd;
      pf[j].events = POLLIN;
      pf[j].revents = 0;
      k += ws[j].fd >= 0;
    }
    if (!k) continue;
    if (poll(pf, (nfds_t)jobs, -1) < 0) {
      if (errno == EINTR) continue;
      /* poll itself failed (no memory): wait on the first running worker instead, never spin */
      int first = 1;
      for (int j = 0; j < jobs; j++) {
        pf[j].revents = first && ws[j].fd >= 0 ? POLLIN : 0;
        if (pf[j].revents) first = 0;
      }
    }
    for (int j = 0; j < jobs; j++) {
      if (ws[j].fd < 0 || !(pf[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      unsigned char c;
      ssize_t got = read(ws[j].fd, &c, 1);
      if (got < 0 && errno == EINTR) continue;
      finish(&ws[j], got == 1 ? c : -1, done, ud);
      if (ws[j].pid) gone[ngone++] = ws[j].pid;
      memset(&ws[j], 0, sizeof ws[j]);
      ws[j].fd = ws[j].out = -1;
      running--;
    }
  }
  for (size_t i = 0; i < ngone; i++) {
    while (waitpid(gone[i], NULL, 0) < 0 && errno == EINTR) {
    }
  }
  free(gone);
  free(ws);
  free(pf);
  return rc;
}
