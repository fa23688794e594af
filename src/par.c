/* fork + poll: workers inherit the parent's whole state, so per-item work needs no setup, and
 * a crash in one worker cannot corrupt the parent or the other items.
 *
 * A worker writes its result into an anonymous in-memory file (memfd) that the parent maps
 * once the worker is done: a worker never waits for the parent to drain a pipe, and the parent
 * neither copies nor grows a buffer for results of tens of megabytes. Through a pipe the worker
 * sends one status byte when its result is complete, so the parent can use the result while
 * the worker's memory is torn down; end of file without that byte means the worker died.
 *
 * With more items than workers, the workers are forked by a zygote once the caller has grown:
 * a process forked when the run starts, so a copy of the caller before any result came back.
 * The caller grows with every result it decodes (256 ranks with strings of their own: 400-576 MB
 * by the end); forked from it, each later worker copied its page tables, and its collector then
 * copied every page of that heap it marked (`ascope memory -j 2` there took twice -j 1's time,
 * most of it in the kernel). The zygote hands each worker's pipe and result file to the caller
 * over a socket (SCM_RIGHTS) and reports how each worker ended, as it is their parent. */
#include "ascope/par.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  pid_t pid;
  int fd;  /* read end of the pipe: the status byte, or end of file when the worker died */
  int out; /* the result file */
  size_t item;
  int zyg;    /* started by the zygote, which reaps it and reports its exit status */
  int dead;   /* a zygote's worker whose pipe ended without the byte: waits for that report */
  int reaped; /* the report came: wstatus as waitpid gives it */
  int wstatus;
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
    int st = w->wstatus; /* a zygote's worker: as the zygote reported it (0 when it could not) */
    if (!w->zyg)
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

/* In a new worker: do the item, send the status byte, end. */
static void run_worker(asc_par_work work, void *ud, size_t item, int out, int pipe_w, pid_t parent) {
  signal(SIGPIPE, SIG_DFL);
  /* a worker ends with its parent (killed or interrupted alone): SIGTERM lets it remove its own
   * temporary files first */
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(1);
  int code = work(ud, item, out);
  fflush(NULL);
  /* the result is complete: the parent may use it while this process is torn down */
  unsigned char byte = (unsigned char)code;
  if (write(pipe_w, &byte, 1) != 1) code = 2;
  _exit(code);
}

/* ---- the zygote ---- */

/* zygote -> caller; Z_STARTED carries the worker's pipe and result file */
enum { Z_STARTED = 1, Z_NOT_STARTED, Z_EXITED };
typedef struct {
  int32_t kind;
  int32_t wstatus;
  int64_t pid;
} zmsg;

static int zsend(int sock, const zmsg *m, const int *fds, int nfds) {
  char ctl[CMSG_SPACE(2 * sizeof(int))];
  struct iovec iov = {(void *)m, sizeof *m};
  struct msghdr h = {0};
  h.msg_iov = &iov;
  h.msg_iovlen = 1;
  if (nfds) {
    memset(ctl, 0, sizeof ctl);
    h.msg_control = ctl;
    h.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&h);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
    memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
  }
  ssize_t n;
  while ((n = sendmsg(sock, &h, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return n == (ssize_t)sizeof *m ? 0 : -1;
}

/* One message: 1, 0 at end of stream (the zygote is gone), -1 for nothing yet (dontwait) or
 * an error. fds[0..1] get the descriptors sent with it, or -1. */
static int zrecv(int sock, zmsg *m, int fds[2], int dontwait) {
  char ctl[CMSG_SPACE(2 * sizeof(int))];
  struct iovec iov = {m, sizeof *m};
  struct msghdr h = {0};
  h.msg_iov = &iov;
  h.msg_iovlen = 1;
  h.msg_control = ctl;
  h.msg_controllen = sizeof ctl;
  fds[0] = fds[1] = -1;
  ssize_t n;
  while ((n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC | (dontwait ? MSG_DONTWAIT : 0))) < 0 && errno == EINTR) {
  }
  if (n == 0) return 0;
  if (n != (ssize_t)sizeof *m) return -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    memcpy(fds, CMSG_DATA(c), (k > 2 ? 2 : k) * sizeof(int));
  }
  if (h.msg_flags & MSG_CTRUNC) { /* descriptors dropped (no room for them here): none whole */
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    fds[0] = fds[1] = -1;
  }
  return 1;
}

/* The zygote's life: start a worker for each item index the caller sends, report how each one
 * ends; leave when the caller closes the socket and the last worker is reaped. */
static void zygote_main(int sock, pid_t caller, asc_par_work work, void *ud) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != caller) _exit(1);
  sigset_t chld, old;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC);
  if (sfd < 0) _exit(1);
  pid_t self = getpid();
  int open_ = 1;
  long children = 0;
  while (open_ || children > 0) {
    struct pollfd pf[2] = {{sfd, POLLIN, 0}, {open_ ? sock : -1, POLLIN, 0}};
    if (poll(pf, 2, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(1);
    }
    if (pf[0].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) < 0 && errno == EINTR) {
      }
      int st;
      pid_t pid;
      while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        children--;
        zmsg m = {Z_EXITED, st, pid};
        if (open_) zsend(sock, &m, NULL, 0);
      }
    }
    if (!pf[1].revents) continue;
    uint64_t item;
    ssize_t n;
    while ((n = recv(sock, &item, sizeof item, 0)) < 0 && errno == EINTR) {
    }
    if (n != (ssize_t)sizeof item) { /* the caller is done (or gone) */
      open_ = 0;
      continue;
    }
    int p[2] = {-1, -1}, out = result_file();
    pid_t pid = -1;
    if (out >= 0 && pipe(p) == 0 && (pid = fork()) < 0) close(p[0]), close(p[1]);
    if (pid == 0) {
      sigprocmask(SIG_SETMASK, &old, NULL);
      close(sfd);
      close(sock);
      close(p[0]);
      run_worker(work, ud, (size_t)item, out, p[1], self);
    }
    zmsg m = {pid > 0 ? Z_STARTED : Z_NOT_STARTED, 0, pid};
    int fds[2] = {p[0], out};
    if (pid > 0) {
      children++;
      close(p[1]);
    }
    zsend(sock, &m, fds, pid > 0 ? 2 : 0);
    if (pid > 0) close(p[0]);
    if (out >= 0) close(out);
  }
  _exit(0);
}

typedef struct {
  pid_t pid; /* 0: none (or gone) */
  int sock;
  long base_kb;  /* the caller's resident size when the run started */
  long after_kb; /* the growth from which the zygote forks the workers */
  int used;      /* the caller has grown: every worker from here on is the zygote's */
} zygote;

/* The caller's resident size in KiB now (/proc/self/statm), 0 when it cannot be read. */
static long resident_kb(void) {
  char buf[128];
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  long size = 0, resident = 0;
  if (sscanf(buf, "%ld %ld", &size, &resident) != 2) return 0;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void zygote_start(zygote *z, long after_kb, asc_par_work work, void *ud) {
  int sv[2];
  z->pid = 0;
  z->sock = -1;
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return;
  pid_t caller = getpid(), pid = fork();
  if (pid == 0) {
    close(sv[0]);
    zygote_main(sv[1], caller, work, ud);
  }
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    return;
  }
  z->pid = pid;
  z->sock = sv[0];
  z->base_kb = resident_kb();
  z->after_kb = after_kb < 0 ? 0 : after_kb;
  z->used = 0;
}

static void free_slot(worker *w) {
  memset(w, 0, sizeof *w);
  w->fd = w->out = -1;
}

/* The zygote's exit report of a worker: its status noted; a worker already waiting for it is
 * finished. Returns the slot freed, or -1. */
static int zygote_exited(worker *ws, int jobs, const zmsg *m, asc_par_done done, void *ud) {
  for (int j = 0; j < jobs; j++) {
    if (!ws[j].zyg || ws[j].pid != (pid_t)m->pid) continue;
    ws[j].reaped = 1;
    ws[j].wstatus = m->wstatus;
    if (!ws[j].dead) return -1; /* its pipe has not ended yet */
    finish(&ws[j], -1, done, ud);
    return j;
  }
  return -1; /* a worker that sent its byte and was finished then */
}

static void zygote_stop(zygote *z) {
  if (!z->pid) return;
  close(z->sock);
  while (waitpid(z->pid, NULL, 0) < 0 && errno == EINTR) {
  }
  z->pid = 0;
  z->sock = -1;
}

/* The exit reports waiting in the socket, handled without waiting for more. Returns 0 when the
 * zygote is gone (the stream ended), else 1. */
static int zygote_reports(zygote *z, worker *ws, int jobs, size_t *running, asc_par_done done, void *ud) {
  zmsg m = {0, 0, 0};
  int fds[2], r;
  while ((r = zrecv(z->sock, &m, fds, 1)) == 1) {
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    int j = m.kind == Z_EXITED ? zygote_exited(ws, jobs, &m, done, ud) : -1;
    if (j >= 0) free_slot(&ws[j]), (*running)--;
  }
  return !(r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK));
}

/* The zygote is gone: its workers waiting for an exit status get none (nor will the others). */
static size_t zygote_lost(zygote *z, worker *ws, int jobs, asc_par_done done, void *ud) {
  size_t freed = 0;
  for (int j = 0; j < jobs; j++) {
    if (!ws[j].dead || ws[j].reaped) continue;
    finish(&ws[j], -1, done, ud);
    free_slot(&ws[j]);
    freed++;
  }
  zygote_stop(z);
  return freed;
}

/* A worker for item into slot w: by the zygote once the caller has grown (its reports met on
 * the way are handled), else forked here. 0, or -1 when no process could be started. */
static int start(worker *w, size_t item, zygote *z, worker *ws, int jobs, size_t *running, pid_t parent,
                 asc_par_work work, asc_par_done done, void *ud) {
  if (z->pid && !z->used && resident_kb() - z->base_kb >= z->after_kb) z->used = 1;
  if (z->pid && z->used) {
    /* room for the two descriptors the reply brings, held until it is asked for: at the
     * open-file limit they would be dropped from a reply whose worker already runs */
    int room[2] = {dup(z->sock), dup(z->sock)};
    if (room[0] >= 0) close(room[0]);
    if (room[1] >= 0) close(room[1]);
    if (room[0] < 0 || room[1] < 0) return -1; /* start it when a worker's descriptors are freed */
    uint64_t i64 = item;
    ssize_t sent;
    while ((sent = send(z->sock, &i64, sizeof i64, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    while (sent == (ssize_t)sizeof i64) {
      zmsg m = {0, 0, 0};
      int fds[2];
      int r = zrecv(z->sock, &m, fds, 0);
      if (r == 1 && m.kind == Z_EXITED) {
        int j = zygote_exited(ws, jobs, &m, done, ud);
        if (j >= 0) free_slot(&ws[j]), (*running)--;
        continue;
      }
      if (r == 1 && m.kind == Z_STARTED && fds[0] >= 0 && fds[1] >= 0) {
        free_slot(w);
        w->pid = (pid_t)m.pid;
        w->fd = fds[0];
        w->out = fds[1];
        w->item = item;
        w->zyg = 1;
        return 0;
      }
      if (fds[0] >= 0) close(fds[0]);
      if (fds[1] >= 0) close(fds[1]);
      if (r == 1 && m.kind == Z_STARTED) kill((pid_t)m.pid, SIGKILL); /* its descriptors were lost */
      if (r == 1) return -1; /* no room for another process (or its descriptors): try later */
      break;
    }
    /* the zygote is gone: its last reports first, then workers are forked here (a worker it
     * forked for this item before it died, unreported, ended with it: the item runs again) */
    zygote_reports(z, ws, jobs, running, done, ud);
    *running -= zygote_lost(z, ws, jobs, done, ud);
  }
  int p[2] = {-1, -1}, out = result_file();
  pid_t pid = -1;
  fflush(NULL); /* what the caller printed since must not be written again by the worker */
  if (out >= 0 && pipe(p) == 0 && (pid = fork()) < 0) close(p[0]), close(p[1]);
  if (pid < 0) {
    if (out >= 0) close(out);
    return -1;
  }
  if (pid == 0) {
    close(p[0]);
    if (z->sock >= 0) close(z->sock); /* the zygote sees the caller's end close, not a copy's */
    run_worker(work, ud, item, out, p[1], parent);
  }
  close(p[1]);
  free_slot(w);
  w->pid = pid;
  w->fd = p[0];
  w->out = out;
  w->item = item;
  return 0;
}

int asc_par_run(size_t nitems, int jobs, asc_par_work work, asc_par_done done, asc_par_self self, void *ud) {
  return asc_par_run_zygote(nitems, jobs, ASC_PAR_ZYGOTE_AFTER_KB, work, done, self, ud);
}

static int run(size_t nitems, int jobs, long zygote_after_kb, asc_par_work work, asc_par_done done,
               asc_par_self self, void *ud) {
  int fit = asc_par_max_jobs();
  if (jobs > fit) jobs = fit;
  if ((size_t)jobs > nitems) jobs = nitems ? (int)nitems : 1;
  if (jobs < 1) jobs = 1;
  fflush(NULL); /* buffered output must not be written twice by the children */
  /* the zygote first: it and its workers then hold none of the memory below (an item that
   * calls exit() runs the leak check, which would find that memory unreferenced there) */
  zygote z = {0, -1, 0, 0, 0};
  if (nitems > (size_t)jobs)
    zygote_start(&z, zygote_after_kb, work, ud); /* workers start after results come */
  worker *ws = calloc((size_t)jobs, sizeof *ws);
  struct pollfd *pf = calloc((size_t)jobs + 1, sizeof *pf);
  pid_t *gone = calloc(nitems + 1, sizeof *gone); /* finished workers, reaped at the end */
  size_t ngone = 0;
  if (!ws || !pf || !gone) {
    zygote_stop(&z);
    free(ws);
    free(pf);
    free(gone);
    asc_error e;
    asc_fail(&e, NULL, -1, 0, 0, "out of memory");
    for (size_t i = 0; i < nitems; i++) done(ud, i, NULL, 0, -1, &e, 0);
    return -1;
  }
  for (int j = 0; j < jobs; j++) free_slot(&ws[j]);
  int here = self && nitems > 1 && nitems <= (size_t)jobs; /* item 0 is the parent's */
  size_t next = here ? 1 : 0, running = 0;
  int rc = 0;
  pid_t parent = getpid();
  while (next < nitems || running > 0) {
    for (int j = 0; j < jobs && next < nitems; j++) {
      if (ws[j].out >= 0) continue;
      if (start(&ws[j], next, &z, ws, jobs, &running, parent, work, done, ud) < 0) {
        if (running > 0) break; /* the system has no room for another: start it when one ends */
        /* not even one worker: report what is left */
        asc_error e;
        asc_fail(&e, NULL, -1, 0, 0, "cannot start a worker process");
        for (; next < nitems; next++) done(ud, next, NULL, 0, -1, &e, 0);
        rc = -1;
        break;
      }
      next++;
      running++;
    }
    if (here) {
      here = 0;
      self(ud, 0);
    }
    int k = 0;
    for (int j = 0; j < jobs; j++) {
      pf[j].fd = ws[j].dead ? -1 : ws[j].fd;
      pf[j].events = POLLIN;
      pf[j].revents = 0;
      k += pf[j].fd >= 0;
    }
    pf[jobs] = (struct pollfd){z.sock, POLLIN, 0};
    if (!k && !(z.pid && running > 0)) continue;
    if (poll(pf, (nfds_t)jobs + 1, -1) < 0) {
      if (errno == EINTR) continue;
      /* poll itself failed (no memory): wait on the first running worker instead, never spin */
      int first = 1;
      for (int j = 0; j <= jobs; j++) {
        pf[j].revents = first && pf[j].fd >= 0 ? POLLIN : 0;
        if (pf[j].revents) first = 0;
      }
    }
    /* exit reports: a worker that died may be waiting for one */
    if (z.pid && pf[jobs].revents && !zygote_reports(&z, ws, jobs, &running, done, ud))
      running -= zygote_lost(&z, ws, jobs, done, ud);
    for (int j = 0; j < jobs; j++) {
      if (pf[j].fd < 0 || ws[j].fd != pf[j].fd || !(pf[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      unsigned char c;
      ssize_t got = read(ws[j].fd, &c, 1);
      if (got < 0 && errno == EINTR) continue;
      if (got != 1 && ws[j].zyg && !ws[j].reaped && z.pid) {
        ws[j].dead = 1; /* finished when the zygote's report of its exit comes */
        continue;
      }
      finish(&ws[j], got == 1 ? c : -1, done, ud);
      if (!ws[j].zyg && ws[j].pid) gone[ngone++] = ws[j].pid;
      free_slot(&ws[j]);
      running--;
    }
  }
  zygote_stop(&z);
  for (size_t i = 0; i < ngone; i++) {
    while (waitpid(gone[i], NULL, 0) < 0 && errno == EINTR) {
    }
  }
  free(gone);
  free(ws);
  free(pf);
  return rc;
}

int asc_par_run_zygote(size_t nitems, int jobs, long zygote_after_kb, asc_par_work work, asc_par_done done,
                       asc_par_self self, void *ud) {
  /* A caller that ignores SIGCHLD (or sets SA_NOCLDWAIT) has its children reaped by the
   * kernel: waitpid would find no worker to tell how it ended. For the run, its workers are
   * reaped here; the caller's choice is restored after. */
  struct sigaction old, dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  int reset =
      sigaction(SIGCHLD, NULL, &old) == 0 && (old.sa_handler == SIG_IGN || (old.sa_flags & SA_NOCLDWAIT));
  if (reset) sigaction(SIGCHLD, &dfl, NULL);
  int rc = run(nitems, jobs, zygote_after_kb, work, done, self, ud);
  if (reset) sigaction(SIGCHLD, &old, NULL);
  return rc;
}
