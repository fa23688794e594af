/* Run per-item work in forked worker processes, at most `jobs` at a time, and collect each
 * worker's output bytes. A worker that crashes or exits badly is reported for its item; the
 * other items' results are unaffected. A worker does item after item until none is left or it
 * has grown by a set amount (then a new one takes its place): a fork and the copying of the pages
 * it writes cost per process, not per item (384 small items on 2 workers: 300k page faults as a
 * process per item, 13 s on a machine where a fault costs 45 us). With more items than jobs,
 * once the caller has grown since the run started (the results it took in), new workers are
 * forked by a process forked at the start (the zygote): they are then copies of the caller as it
 * was then, and what it built since is neither in them nor copied for them. */
#ifndef ASCOPE_PAR_H
#define ASCOPE_PAR_H

#include <stddef.h>

#include "ascope/error.h"

/* In the child: do item i and write its result to fd. Return the exit status (0 = success). */
typedef int (*asc_par_work)(void *ud, size_t i, int fd);
/* In the parent: item i finished. status is 0 on a clean exit with code 0; otherwise why says
 * what happened ("worker exited with code 3", "worker killed by signal 11 (...)"; its msg is ""
 * when the worker reported its own failure in its result). data holds all bytes the worker
 * wrote; data and why are valid during the call only. mapped: data is a private mapping of the
 * result file, starting on a page, so pages the callback has read may be dropped
 * (madvise MADV_DONTNEED) while it goes on: a result as large as its decoded form is then not
 * resident twice over. */
typedef void (*asc_par_done)(void *ud, size_t i, const char *data, size_t len, int status,
                             const asc_error *why, int mapped);

/* In the parent: do item i here (the item reports its own result). */
typedef void (*asc_par_self)(void *ud, size_t i);

/* 0 when every worker could be started; -1 if fork/pipe failed (the items not started are
 * reported through done with status -1). With self, and when every item can have a worker of
 * its own (nitems <= jobs), the parent does item 0 itself once the workers for the others are
 * running, rather than wait idle beside them; its result then needs no sending. A caller that
 * ignores SIGCHLD has it at SIG_DFL for the run (so how each worker ended can be told), then
 * ignored again; a child of its own that ends meanwhile stays a zombie until it is waited for. */
int asc_par_run(size_t nitems, int jobs, asc_par_work work, asc_par_done done, asc_par_self self, void *ud);

/* Forking from the caller costs in proportion to its size; asking the zygote costs a round trip
 * (0.1 ms a worker). New workers come from the zygote once the caller has grown by this much
 * since the run started. */
#define ASC_PAR_ZYGOTE_AFTER_KB (32L * 1024)
/* A worker leaves after an item once it has grown by this much since it started: what items
 * leave behind (freed memory kept by the allocator, strings interned into a table the inherited
 * data holds) stays bounded, and a worker for big items is a new process for each. */
#define ASC_PAR_RETIRE_AFTER_KB (64L * 1024)

typedef struct {
  long zygote_after_kb; /* 0: every new worker from the zygote */
  long retire_after_kb; /* 0: a new process for every item */
} asc_par_opts;

/* asc_par_run with the limits above. */
int asc_par_run_opts(size_t nitems, int jobs, const asc_par_opts *opts, asc_par_work work, asc_par_done done,
                     asc_par_self self, void *ud);

/* jobs is clamped to the items, to ASC_PAR_MAX_JOBS and to what the open-file limit allows
 * (asc_par_max_jobs); when the system refuses a new process, the next item waits for a worker
 * to finish instead of failing. */
#define ASC_PAR_MAX_JOBS 4096
int asc_par_max_jobs(void);

#endif
