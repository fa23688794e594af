/* Binary inputs: read-only mmap views of files, protobuf wire-format fields, .npy headers. */
#ifndef ASCOPE_BIN_H
#define ASCOPE_BIN_H

#include <stddef.h>
#include <stdint.h>

#include "ascope/error.h"

typedef struct asc_view {
  const uint8_t *p;
  size_t n;
  void *map;
  size_t mapn;
} asc_view;

/* Map a whole file read-only (an empty file gives n = 0). */
int asc_view_open(const char *path, asc_view *v, asc_error *err);
void asc_view_close(asc_view *v);

enum { ASC_PB_VARINT = 0, ASC_PB_I64 = 1, ASC_PB_LEN = 2, ASC_PB_I32 = 5 };

typedef struct asc_pb_field {
  uint32_t field;
  int wire;
  uint64_t varint;      /* VARINT, I64 and I32 values */
  const uint8_t *bytes; /* LEN payload */
  size_t len;
  size_t offset; /* where the field's key starts */
} asc_pb_field;

/* Next field of a protobuf message in p[0, n) from *pos: 1 with a field, 0 at the end,
 * -1 when the bytes are not a valid message (why says what). */
int asc_pb_next(const uint8_t *p, size_t n, size_t *pos, asc_pb_field *f, const char **why);
int asc_pb_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *out);

typedef struct asc_npy {
  char descr[16]; /* e.g. "<i4", "<f8" */
  char kind;      /* 'i', 'u', 'f', 'b' */
  int itemsize;
  int fortran;
  int ndim;
  uint64_t shape[8];
  uint64_t count;
  size_t data_off;
} asc_npy;

/* Parse a .npy header (versions 1-3); why is set on failure. */
int asc_npy_parse(const uint8_t *p, size_t n, asc_npy *out, asc_error *err);

#endif
