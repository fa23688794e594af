/* The largest groups of a grouped sum, ranked without sorting every group: a summary keeps
 * the top N call sites, and a distinct call stack per row makes as many groups as rows. */
#ifndef ASCOPE_TOPGROUPS_H
#define ASCOPE_TOPGROUPS_H
#include <stddef.h>
#include <stdint.h>

/* The text a group is known by (its key, or a label for the group without one). */
typedef const char *(*asc_group_key)(void *ud, size_t k, size_t *len);

/* Of the groups k < nk with cnt[k] > 0, the n first in rank order: the larger sum first, then
 * the smaller key (bytes compared unsigned, a prefix before the longer text), then the smaller
 * k. Writes their k, in that order, to out (room for n: it is the heap while they are picked)
 * and returns how many it wrote. */
size_t asc_top_groups(const double *sum, const int64_t *cnt, size_t nk, size_t n, asc_group_key key, void *ud,
                      size_t *out);
#endif
