/* fork + pipe + poll: workers inherit the parent's whole state, so per-item work needs no
 * setup, and a crash in one worker cannot corrupt the parent or the other items. */
#include "ascope/par.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  pid_t pid;
  int fd;
  size_t item;
  char *buf;
  size_t n, cap;
} worker;

static void finish(worker *w, asc_par_done done, void *ud) {
  int st = 0;
  while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {
  }
  char why[96] = "";
  int status = 0;
  if (WIFSIGNALED(st)) {
    status = -1;
    snprintf(why, sizeof why, "worker killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
  } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
    status = WEXITSTATUS(st);
    snprintf(why, sizeof why, "worker exited with code %d", status);
  }
  done(ud, w->item, w->buf, w->n, status, why);
  free(w->buf);
  close(w->fd);
  memset(w, 0, sizeof *w);
  w->fd = -1;
}

int asc_par_run(size_t nitems, int jobs, asc_par_work work, asc_par_done done, void *ud) {
  if (jobs < 1) jobs = 1;
  worker *ws = calloc((size_t)jobs, sizeof *ws);
  struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
  if (!ws || !pf) {
    free(ws);
    free(pf);
    for (size_t i = 0; i < nitems; i++) done(ud, i, NULL, 0, -1, "out of memory");
    return -1;
  }
  for (int j = 0; j < jobs; j++) ws[j].fd = -1;
  size_t next = 0, running = 0;
  int rc = 0;
  fflush(NULL); /* buffered output must not be written twice by the children */
  while (next < nitems || running > 0) {
    for (int j = 0; j < jobs && next < nitems; j++) {
      if (ws[j].fd >= 0) continue;
      int p[2];
      pid_t pid = -1;
      if (pipe(p) == 0 && (pid = fork()) < 0) close(p[0]), close(p[1]);
      if (pid < 0) {
        /* no more workers: report what is left, keep draining the running ones */
        for (; next < nitems; next++) done(ud, next, NULL, 0, -1, "cannot start a worker process");
        rc = -1;
        break;
      }
      if (pid == 0) {
        close(p[0]);
        signal(SIGPIPE, SIG_DFL);
        int code = work(ud, next, p[1]);
        close(p[1]);
        fflush(NULL);
        _exit(code);
      }
      close(p[1]);
      ws[j] = (worker){pid, p[0], next, NULL, 0, 0};
      next++;
      running++;
    }
    int k = 0;
    for (int j = 0; j < jobs; j++) {
      pf[j].fd = ws[j].fd;
      pf[j].events = POLLIN;
      pf[j].revents = 0;
      k += ws[j].fd >= 0;
    }
    if (!k) continue;
    if (poll(pf, (nfds_t)jobs, -1) < 0) continue; /* EINTR: poll again */
    for (int j = 0; j < jobs; j++) {
      if (ws[j].fd < 0 || !(pf[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      worker *w = &ws[j];
      if (w->n + 65536 > w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 131072;
        char *b = realloc(w->buf, nc);
        if (!b) {
          kill(w->pid, SIGKILL);
          w->n = 0;
          finish(w, done, ud);
          running--;
          continue;
        }
        w->buf = b;
        w->cap = nc;
      }
      ssize_t got = read(w->fd, w->buf + w->n, w->cap - w->n);
      if (got > 0) {
        w->n += (size_t)got;
      } else if (got == 0 || errno != EINTR) {
        finish(w, done, ud);
        running--;
      }
    }
  }
  free(ws);
  free(pf);
  return rc;
}
