/* The longest dependency path through a step's tasks (the timeline's critical path).
 *   nodes   the given rows, then each flow's producer whose consumer is already a node (in edge
 *           order: a producer added by one edge is a node for the edges after it)
 *   edges   lane order (the previous task by start on the same lane) and the flows, taken from
 *           a predecessor only when it comes earlier in (start, end, row) order (of two tasks
 *           that start together, the one over first: an event record at t precedes the task
 *           that starts at t)
 *   length  each task adds the part of its interval, clipped to [lo, hi], after its
 *           predecessor's reach (the latest end along the path so far), so a path covers each
 *           instant of [lo, hi] at most once and is never longer than hi - lo
 * Ties keep the first candidate met: the lane predecessor, then the flows in edge order, and
 * among equally long paths the end that comes first. A task whose start or duration is missing
 * is no node. Work is O(k log k + e) for k nodes and e flows: the columns are read at the
 * nodes' rows only, so a step of a long trace costs what the step holds. */
#ifndef ASCOPE_TASKPATH_H
#define ASCOPE_TASKPATH_H

#include <stddef.h>
#include <stdint.h>

#include "ascope/column.h"

typedef struct asc_taskpath {
  int64_t length; /* -1 when there is no node */
  size_t nodes;   /* tasks in the graph */
  size_t n;       /* tasks on the path */
  size_t *path;   /* the caller's room for nr + ne rows: the path's 0-based rows, the last task first */
  int64_t *gain;  /* the caller's room for as many: what each of them adds */
} asc_taskpath;

/* ts, dur: starts and durations of nrows rows (ASC_NULL_I64 = missing); lane: an integer
 * column of nrows lane numbers. rows: nr 0-based node rows (a row listed twice is one node);
 * prod, cons: ne flows (0-based rows, producer before consumer). out->path and out->gain
 * must be set; the rest of out is filled in. Returns 0, -1 when memory is short, -2 when a
 * row is out of range. */
int asc_taskpath_longest(const int64_t *ts, const int64_t *dur, const asc_col *lane, size_t nrows,
                         const size_t *rows, size_t nr, const size_t *prod, const size_t *cons, size_t ne,
                         int64_t lo, int64_t hi, asc_taskpath *out);

#endif
