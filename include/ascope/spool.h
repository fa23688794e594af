/* A spool: output that may be larger than memory (every classified log line), held in an
 * anonymous temporary file until it is saved under a name. The file is made in $TMPDIR (else
 * /tmp) and unlinked at once: it has no name in the file system, nothing is left behind when
 * the process ends or dies, and nothing appears in an output folder until a save. */
#ifndef ASCOPE_SPOOL_H
#define ASCOPE_SPOOL_H

#include "ascope/error.h"
#include "ascope/fs.h"

/* Open an empty spool in a (written with asc_atomic_write, as an output file is). */
int asc_spool_open(asc_atomic *a, asc_error *err);
/* Copy everything written so far to `path`, atomically (a temporary file beside it, renamed into
 * place); the spool stays open and may be saved again. A write to the spool that failed (a full
 * disk) fails the save, naming `path`. */
int asc_spool_save(asc_atomic *a, const char *path, asc_error *err);
/* Close the spool; its bytes go with it. */
void asc_spool_close(asc_atomic *a);

#endif
