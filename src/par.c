/* fork + poll: workers inherit the parent's whole state, so per-item work needs no setup, and
 * a crash in one worker cannot corrupt the parent or the other items.
 *
 * A worker writes each result into an anonymous in-memory file (memfd) that the parent maps
 * once the item is done: a worker never waits for the parent to drain a pipe, and the parent
 * neither copies nor grows a buffer for results of tens of megabytes. Each worker has a socket
 * to the parent: the parent sends an item's number with its result file, the worker replies
 * with two bytes (the item's status, whether it leaves) once the result is complete, so the
 * parent can use it at once; end of file with an item out and no reply means the worker died,
 * and its exit status says how. An idle worker gets the next item; one that has grown by the
 * retirement limit leaves and a new one takes its slot.
 *
 * New workers are forked by a zygote once the caller has grown: a process forked when the run
 * starts, so a copy of the caller before any result came back. The caller grows with every
 * result it decodes (256 ranks with strings of their own: 400-576 MB by the end); forked from
 * it, each later worker copied its page tables, and its collector then copied every page of
 * that heap it marked (`ascope memory -j 2` there took twice -j 1's time, most of it in the
 * kernel). The zygote hands each worker's socket to the caller (SCM_RIGHTS) and reports how
 * each worker ended, as it is their parent. */
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

/* A slot: empty (pid 0), a worker doing an item (out >= 0), or an idle worker (out -1). */
typedef struct {
  pid_t pid;
  int fd;  /* the worker's socket: items go out, replies come back; end of file when it died */
  int out; /* the item's result file */
  size_t item;
  int zyg;    /* started by the zygote, which reaps it and reports its exit status */
  int dead;   /* a zygote's worker whose socket ended without a reply: waits for that report */
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

/* The item is done: code is the status the worker replied, or -1 when it sent none (it crashed
 * or left without finishing the item: its exit status tells how). The result file is closed;
 * the worker's socket stays with the slot. */
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
  close(w->out);
  w->out = -1;
}

/* Workers the system allows: each holds two descriptors in the parent (its socket and its
 * result file) and briefly a third while it starts; a quarter of the open-file limit stays for
 * the caller's own files. */
int asc_par_max_jobs(void) {
  struct rlimit rl;
  long long fit = ASC_PAR_MAX_JOBS;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    long long spare = (long long)rl.rlim_cur - (long long)rl.rlim_cur / 4 - 16;
    if (spare / 3 < fit) fit = spare / 3;
  }
  return fit < 1 ? 1 : (int)fit;
}

/* One message of len bytes with up to two descriptors. 0, or -1. */
static int msg_send(int sock, const void *buf, size_t len, const int *fds, int nfds) {
  char ctl[CMSG_SPACE(2 * sizeof(int))];
  struct iovec iov = {(void *)buf, len};
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
  return n == (ssize_t)len ? 0 : -1;
}

/* One message of exactly len bytes: 1, 0 at end of stream, -1 for nothing yet (dontwait), an
 * error or a message of another length. fds[0..1] get the descriptors sent with it, or -1
 * (none whole when some were dropped for want of room here). */
static int msg_recv(int sock, void *buf, size_t len, int fds[2], int dontwait) {
  char ctl[CMSG_SPACE(2 * sizeof(int))];
  struct iovec iov = {buf, len};
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
  if (n < 0) return -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    memcpy(fds, CMSG_DATA(c), (k > 2 ? 2 : k) * sizeof(int));
  }
  if ((h.msg_flags & MSG_CTRUNC) || n != (ssize_t)len) {
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    fds[0] = fds[1] = -1;
    if (n != (ssize_t)len) return -1;
  }
  return 1;
}

/* This process's resident size in KiB now (/proc/self/statm), 0 when it cannot be read. */
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

/* A worker's life: each item that comes on sock is done into the result file that comes with
 * it, then the reply; it ends when the parent closes the socket, after an item that did not
 * succeed, or once it has grown by retire_kb. */
static void worker_main(asc_par_work work, void *ud, int sock, pid_t parent, long retire_kb) {
  signal(SIGPIPE, SIG_DFL);
  /* a worker ends with its parent (killed or interrupted alone): SIGTERM lets it remove its own
   * temporary files first */
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(1);
  long base = retire_kb > 0 ? resident_kb() : 0;
  for (;;) {
    uint64_t item;
    int fds[2];
    int r = msg_recv(sock, &item, sizeof item, fds, 0);
    if (r == 0) _exit(0); /* no more items */
    if (r < 0 || fds[0] < 0) _exit(1);
    if (fds[1] >= 0) close(fds[1]);
    int code = work(ud, (size_t)item, fds[0]);
    fflush(NULL);
    close(fds[0]);
    /* the result is complete: the parent may use it while this process goes on or ends */
    int leave = code != 0 || retire_kb <= 0 || resident_kb() - base >= retire_kb;
    unsigned char reply[2] = {(unsigned char)code, (unsigned char)leave};
    if (msg_send(sock, reply, sizeof reply, NULL, 0)) _exit(code ? code : 2);
    if (leave) _exit(code);
  }
}

/* ---- the zygote ---- */

/* zygote -> caller; Z_STARTED carries the worker's socket */
enum { Z_STARTED = 1, Z_NOT_STARTED, Z_EXITED };
typedef struct {
  int32_t kind;
  int32_t wstatus;
  int64_t pid;
} zmsg;

/* The zygote's life: start a worker each time the caller asks, report how each one ends;
 * leave when the caller closes the socket and the last worker is reaped. */
static void zygote_main(int sock, pid_t caller, long retire_kb, asc_par_work work, void *ud) {
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
        if (open_) msg_send(sock, &m, sizeof m, NULL, 0);
      }
    }
    if (!pf[1].revents) continue;
    char ask;
    ssize_t n;
    while ((n = recv(sock, &ask, 1, 0)) < 0 && errno == EINTR) {
    }
    if (n != 1) { /* the caller is done (or gone) */
      open_ = 0;
      continue;
    }
    int sv[2] = {-1, -1};
    pid_t pid = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0 && (pid = fork()) < 0)
      close(sv[0]), close(sv[1]);
    if (pid == 0) {
      sigprocmask(SIG_SETMASK, &old, NULL);
      close(sfd);
      close(sock);
      close(sv[0]);
      worker_main(work, ud, sv[1], self, retire_kb);
    }
    zmsg m = {pid > 0 ? Z_STARTED : Z_NOT_STARTED, 0, pid};
    if (pid > 0) {
      children++;
      close(sv[1]);
    }
    msg_send(sock, &m, sizeof m, sv, pid > 0 ? 1 : 0);
    if (pid > 0) close(sv[0]);
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

static void zygote_start(zygote *z, const asc_par_opts *o, asc_par_work work, void *ud) {
  int sv[2];
  z->pid = 0;
  z->sock = -1;
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return;
  pid_t caller = getpid(), pid = fork();
  if (pid == 0) {
    close(sv[0]);
    zygote_main(sv[1], caller, o->retire_after_kb, work, ud);
  }
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    return;
  }
  z->pid = pid;
  z->sock = sv[0];
  z->base_kb = resident_kb();
  z->after_kb = o->zygote_after_kb < 0 ? 0 : o->zygote_after_kb;
  z->used = 0;
}

static void zygote_stop(zygote *z) {
  if (!z->pid) return;
  close(z->sock);
  while (waitpid(z->pid, NULL, 0) < 0 && errno == EINTR) {
  }
  z->pid = 0;
  z->sock = -1;
}

/* ---- the run ---- */

typedef struct {
  worker *ws;
  int jobs;
  size_t running; /* slots doing an item */
  pid_t *gone;    /* the caller's workers that left, not reaped yet */
  size_t ngone;
  zygote z;
  pid_t self;
  asc_par_opts opts;
  asc_par_work work;
  asc_par_done done;
  void *ud;
} pool;

static void free_slot(worker *w) {
  memset(w, 0, sizeof *w);
  w->fd = w->out = -1;
}

/* The slot's worker is done with (its item finished): its socket closed, so that it ends if it
 * has not; the caller's own is reaped later (reap_gone), the zygote reaps and reports its own. */
static void release(pool *p, worker *w) {
  if (w->fd >= 0) close(w->fd);
  if (!w->zyg && w->pid) p->gone[p->ngone++] = w->pid;
  free_slot(w);
}

/* The zygote's exit report of a worker: its status noted; a worker already waiting for it is
 * finished, an idle one released. */
static void zygote_exited(pool *p, const zmsg *m) {
  for (int j = 0; j < p->jobs; j++) {
    worker *w = &p->ws[j];
    if (!w->zyg || w->pid != (pid_t)m->pid) continue;
    w->reaped = 1;
    w->wstatus = m->wstatus;
    if (w->out < 0) {
      release(p, w);
    } else if (w->dead) {
      finish(w, -1, p->done, p->ud);
      release(p, w);
      p->running--;
    }
    return; /* else its socket has not ended yet */
  }
  /* a worker that replied and was released then */
}

/* The exit reports waiting in the socket, handled without waiting for more. Returns 0 when the
 * zygote is gone (the stream ended), else 1. */
static int zygote_reports(pool *p) {
  zmsg m = {0, 0, 0};
  int fds[2], r;
  while ((r = msg_recv(p->z.sock, &m, sizeof m, fds, 1)) == 1) {
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    if (m.kind == Z_EXITED) zygote_exited(p, &m);
  }
  return !(r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK));
}

/* The zygote is gone, and its workers with it: those waiting for an exit status get none, nor
 * will the others. */
static void zygote_lost(pool *p) {
  for (int j = 0; j < p->jobs; j++) {
    worker *w = &p->ws[j];
    if (!w->zyg) continue;
    if (w->out < 0) {
      release(p, w);
    } else if (w->dead && !w->reaped) {
      finish(w, -1, p->done, p->ud);
      release(p, w);
      p->running--;
    }
  }
  zygote_stop(&p->z);
}

/* A new worker from the zygote into slot w (its reports met on the way handled). 1 when it
 * started, 0 when there is no room for another process now, -1 when the zygote is gone. */
static int from_zygote(pool *p, worker *w) {
  /* room for the descriptor the reply brings, held until it is asked for: at the open-file
   * limit it would be dropped from a reply whose worker already runs */
  int room = dup(p->z.sock);
  if (room < 0) return 0;
  close(room);
  char ask = 1;
  ssize_t sent;
  while ((sent = send(p->z.sock, &ask, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  while (sent == 1) {
    zmsg m = {0, 0, 0};
    int fds[2];
    int r = msg_recv(p->z.sock, &m, sizeof m, fds, 0);
    if (fds[1] >= 0) close(fds[1]);
    if (r == 1 && m.kind == Z_EXITED) {
      if (fds[0] >= 0) close(fds[0]);
      zygote_exited(p, &m);
      continue;
    }
    if (r == 1 && m.kind == Z_STARTED && fds[0] >= 0) {
      w->pid = (pid_t)m.pid;
      w->fd = fds[0];
      w->zyg = 1;
      return 1;
    }
    if (r == 1 && m.kind == Z_STARTED) kill((pid_t)m.pid, SIGKILL); /* its socket was lost */
    if (r == 1) return 0; /* no room for another process (or its socket): try later */
    break;
  }
  /* the zygote is gone: its last reports first (a worker it forked for this item before it
   * died, unreported, ended with it) */
  zygote_reports(p);
  zygote_lost(p);
  return -1;
}

/* The caller's workers that left and have ended, reaped (block: all of them, waiting). Until
 * then they count against the processes the user may have. */
static void reap_gone(pool *p, int block) {
  size_t kept = 0;
  for (size_t i = 0; i < p->ngone; i++) {
    pid_t r;
    while ((r = waitpid(p->gone[i], NULL, block ? 0 : WNOHANG)) < 0 && errno == EINTR) {
    }
    if (r == 0) p->gone[kept++] = p->gone[i];
  }
  p->ngone = kept;
}

/* A new worker forked here into slot w; out, the result file of its first item, is not its
 * copy to keep. 1, or 0 when no process could be started. */
static int fork_here(pool *p, worker *w, int out) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  fflush(NULL); /* what the caller printed since must not be written again by the worker */
  reap_gone(p, 0);
  pid_t pid = fork();
  if (pid < 0 && errno == EAGAIN && p->ngone) { /* at the process limit: the ones leaving first */
    reap_gone(p, 1);
    pid = fork();
  }
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return 0;
  }
  if (pid == 0) {
    close(sv[0]);
    /* the other workers' sockets and results: held here, a socket would not end when the
     * caller closes it, and a result file would outlive its item */
    for (int j = 0; j < p->jobs; j++) {
      if (p->ws[j].fd >= 0) close(p->ws[j].fd);
      if (p->ws[j].out >= 0) close(p->ws[j].out);
    }
    close(out);
    if (p->z.sock >= 0) close(p->z.sock); /* the zygote sees the caller's end close, not a copy's */
    worker_main(p->work, p->ud, sv[1], p->self, p->opts.retire_after_kb);
  }
  close(sv[1]);
  w->pid = pid;
  w->fd = sv[0];
  return 1;
}

/* Item into slot w: to its idle worker, else to a new one (the zygote's once the caller has
 * grown). 0, or -1 when no worker could take it now. */
static int start(pool *p, worker *w, size_t item) {
  int out = result_file();
  if (out < 0) return -1;
  uint64_t i64 = item;
  if (w->pid && msg_send(w->fd, &i64, sizeof i64, &out, 1) != 0) release(p, w); /* it ended while idle */
  if (!w->pid) {
    zygote *z = &p->z;
    if (z->pid && !z->used && resident_kb() - z->base_kb >= z->after_kb) z->used = 1;
    int got = z->pid && z->used ? from_zygote(p, w) : -1;
    if (got < 0) got = fork_here(p, w, out);
    if (!got) {
      close(out);
      return -1;
    }
    if (msg_send(w->fd, &i64, sizeof i64, &out, 1) != 0) { /* it never has the item */
      close(w->fd);
      if (!w->zyg) /* it ends with its socket (or has); it did no item, so it is not one gone */
        while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR) {
        }
      free_slot(w);
      close(out);
      return -1;
    }
  }
  w->out = out;
  w->item = item;
  return 0;
}

int asc_par_run(size_t nitems, int jobs, asc_par_work work, asc_par_done done, asc_par_self self, void *ud) {
  asc_par_opts o = {ASC_PAR_ZYGOTE_AFTER_KB, ASC_PAR_RETIRE_AFTER_KB};
  return asc_par_run_opts(nitems, jobs, &o, work, done, self, ud);
}

/* The reply on slot j's socket, or its end. */
static void reply(pool *p, int j, size_t next, size_t nitems) {
  worker *w = &p->ws[j];
  unsigned char rep[2];
  ssize_t got = read(w->fd, rep, sizeof rep);
  if (got < 0 && errno == EINTR) return;
  if (got != 2 && w->zyg && !w->reaped && p->z.pid) {
    w->dead = 1; /* finished when the zygote's report of its exit comes */
    return;
  }
  finish(w, got == 2 ? rep[0] : -1, p->done, p->ud);
  p->running--;
  /* it stays for the next item unless it leaves or none is left */
  if (got != 2 || rep[1] || next >= nitems) release(p, w);
}

static int run(size_t nitems, int jobs, const asc_par_opts *o, asc_par_work work, asc_par_done done,
               asc_par_self self, void *ud) {
  int fit = asc_par_max_jobs();
  if (jobs > fit) jobs = fit;
  if ((size_t)jobs > nitems) jobs = nitems ? (int)nitems : 1;
  if (jobs < 1) jobs = 1;
  fflush(NULL); /* buffered output must not be written twice by the children */
  pool p = {NULL, jobs, 0, NULL, 0, {0, -1, 0, 0, 0}, getpid(), *o, work, done, ud};
  /* the zygote first: it and its workers then hold none of the memory below (an item that
   * calls exit() runs the leak check, which would find that memory unreferenced there) */
  if (nitems > (size_t)jobs) zygote_start(&p.z, o, work, ud); /* workers start after results come */
  p.ws = calloc((size_t)jobs, sizeof *p.ws);
  struct pollfd *pf = calloc((size_t)jobs + 1, sizeof *pf);
  p.gone = calloc(nitems + 1, sizeof *p.gone); /* each of the caller's workers did an item */
  if (!p.ws || !pf || !p.gone) {
    zygote_stop(&p.z);
    free(p.ws);
    free(pf);
    free(p.gone);
    asc_error e;
    asc_fail(&e, NULL, -1, 0, 0, "out of memory");
    for (size_t i = 0; i < nitems; i++) done(ud, i, NULL, 0, -1, &e, 0);
    return -1;
  }
  for (int j = 0; j < jobs; j++) free_slot(&p.ws[j]);
  int here = self && nitems > 1 && nitems <= (size_t)jobs; /* item 0 is the parent's */
  size_t next = here ? 1 : 0;
  int rc = 0;
  while (next < nitems || p.running > 0) {
    for (int j = 0; j < jobs && next < nitems; j++) {
      if (p.ws[j].out >= 0) continue;
      if (start(&p, &p.ws[j], next) < 0) continue; /* no room for another: an idle one may take it */
      next++;
      p.running++;
    }
    if (next < nitems && !p.running) { /* not one worker took an item: report what is left */
      asc_error e;
      asc_fail(&e, NULL, -1, 0, 0, "cannot start a worker process");
      for (; next < nitems; next++) done(ud, next, NULL, 0, -1, &e, 0);
      rc = -1;
    }
    if (here) {
      here = 0;
      self(ud, 0);
    }
    int k = 0;
    for (int j = 0; j < jobs; j++) {
      pf[j].fd = p.ws[j].dead || p.ws[j].out < 0 ? -1 : p.ws[j].fd;
      pf[j].events = POLLIN;
      pf[j].revents = 0;
      k += pf[j].fd >= 0;
    }
    pf[jobs] = (struct pollfd){p.z.sock, POLLIN, 0};
    if (!k && !(p.z.pid && p.running > 0)) continue;
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
    if (p.z.pid && pf[jobs].revents && !zygote_reports(&p)) zygote_lost(&p);
    for (int j = 0; j < jobs; j++) {
      if (pf[j].fd < 0 || p.ws[j].fd != pf[j].fd || p.ws[j].out < 0 || p.ws[j].dead ||
          !(pf[j].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      reply(&p, j, next, nitems);
    }
  }
  for (int j = 0; j < jobs; j++)
    if (p.ws[j].pid) release(&p, &p.ws[j]); /* idle: their items ran out */
  zygote_stop(&p.z);
  for (size_t i = 0; i < p.ngone; i++) {
    while (waitpid(p.gone[i], NULL, 0) < 0 && errno == EINTR) {
    }
  }
  free(p.gone);
  free(p.ws);
  free(pf);
  return rc;
}

int asc_par_run_opts(size_t nitems, int jobs, const asc_par_opts *opts, asc_par_work work, asc_par_done done,
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
  int rc = run(nitems, jobs, opts, work, done, self, ud);
  if (reset) sigaction(SIGCHLD, &old, NULL);
  return rc;
}
