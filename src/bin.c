/* mmap views, protobuf wire format and .npy headers: the byte-level half of dump reading. */
#include "ascope/bin.h"

#include "ascope/checked.h"
#include "ascope/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int asc_view_open(const char *path, asc_view *v, asc_error *err) {
  memset(v, 0, sizeof *v);
  int fd = asc_open_input_fd(path, err);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return asc_fail(err, path, -1, 0, 0, "not a regular file");
  }
  if (st.st_size > 0) {
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      int e = errno;
      close(fd);
      return asc_fail(err, path, -1, 0, 0, "cannot map: %s", strerror(e));
    }
    v->map = m;
    v->mapn = (size_t)st.st_size;
    v->p = m;
    v->n = (size_t)st.st_size;
  }
  close(fd);
  return 0;
}

void asc_view_close(asc_view *v) {
  if (v->map) munmap(v->map, v->mapn);
  memset(v, 0, sizeof *v);
}

int asc_pb_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *out) {
  uint64_t x = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= n) return -1;
    uint8_t b = p[(*pos)++];
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = x;
      return 0;
    }
  }
  return -1;
}

int asc_pb_next(const uint8_t *p, size_t n, size_t *pos, asc_pb_field *f, const char **why) {
  if (*pos >= n) return 0;
  f->offset = *pos;
  uint64_t key;
  if (asc_pb_varint(p, n, pos, &key)) return *why = "truncated field key", -1;
  f->field = (uint32_t)(key >> 3);
  f->wire = (int)(key & 7);
  f->bytes = NULL;
  f->len = 0;
  f->varint = 0;
  if (f->field == 0) return *why = "field number 0", -1;
  switch (f->wire) {
  case ASC_PB_VARINT:
    if (asc_pb_varint(p, n, pos, &f->varint)) return *why = "truncated varint", -1;
    return 1;
  case ASC_PB_I64:
    if (*pos + 8 > n) return *why = "truncated 64-bit value", -1;
    memcpy(&f->varint, p + *pos, 8);
    *pos += 8;
    return 1;
  case ASC_PB_I32: {
    uint32_t v;
    if (*pos + 4 > n) return *why = "truncated 32-bit value", -1;
    memcpy(&v, p + *pos, 4);
    f->varint = v;
    *pos += 4;
    return 1;
  }
  case ASC_PB_LEN: {
    uint64_t len;
    if (asc_pb_varint(p, n, pos, &len)) return *why = "truncated length", -1;
    if (len > n - *pos) return *why = "length runs past the end", -1;
    f->bytes = p + *pos;
    f->len = (size_t)len;
    *pos += (size_t)len;
    return 1;
  }
  default: return *why = "unsupported wire type (groups or garbage)", -1;
  }
}

/* Find 'key': value in the header dict text h (NUL-terminated); returns the value or NULL. */
static const char *dict_value(const char *h, const char *key) {
  size_t kl = strlen(key);
  for (const char *q = h; *q; q++)
    if ((*q == '\'' || *q == '"') && strncmp(q + 1, key, kl) == 0 && q[1 + kl] == *q) {
      const char *v = q + kl + 2;
      while (*v == ' ' || *v == ':') v++;
      return v;
    }
  return NULL;
}

/* The header dict h (NUL-terminated, so no scan can leave it): dtype, order and shape. */
static int npy_dict(const char *h, asc_npy *out, asc_error *err) {
  const char *d = dict_value(h, "descr");
  if (!d || (*d != '\'' && *d != '"')) return asc_fail(err, NULL, -1, 0, 0, "no descr in .npy header");
  size_t k = 0;
  for (d++; *d && *d != '\'' && *d != '"' && k < sizeof out->descr - 1; d++) out->descr[k++] = *d;
  const char *t = out->descr;
  if (*t == '<' || *t == '|' || *t == '=')
    t++;
  else if (*t == '>')
    return asc_fail(err, NULL, -1, 0, 0, "big-endian .npy data is not supported");
  out->kind = *t;
  out->itemsize = *t ? atoi(t + 1) : 0;
  if (!out->kind || !strchr("iufb", out->kind) ||
      (out->itemsize != 1 && out->itemsize != 2 && out->itemsize != 4 && out->itemsize != 8))
    return asc_fail(err, NULL, -1, 0, 0, "unsupported dtype %s", out->descr);
  const char *fo = dict_value(h, "fortran_order");
  out->fortran = fo && strncmp(fo, "True", 4) == 0;
  const char *sh = dict_value(h, "shape");
  if (!sh || *sh != '(') return asc_fail(err, NULL, -1, 0, 0, "no shape in .npy header");
  size_t count = 1;
  for (sh++; *sh && *sh != ')';) {
    while (*sh == ' ' || *sh == ',') sh++;
    if (*sh == ')') break;
    if (*sh < '0' || *sh > '9' || out->ndim >= 8)
      return asc_fail(err, NULL, -1, 0, 0, "bad shape in .npy header");
    char *end;
    errno = 0;
    unsigned long long v = strtoull(sh, &end, 10);
    if (errno || v > SIZE_MAX || asc_size_mul(count, (size_t)v, &count))
      return asc_fail(err, NULL, -1, 0, 0, "shape in .npy header is too large");
    out->shape[out->ndim++] = v;
    sh = end;
    if (*sh == 'L') sh++;
  }
  if (*sh != ')') return asc_fail(err, NULL, -1, 0, 0, "bad shape in .npy header");
  out->count = count;
  return 0;
}

int asc_npy_parse(const uint8_t *p, size_t n, asc_npy *out, asc_error *err) {
  memset(out, 0, sizeof *out);
  if (n < 10 || memcmp(p, "\x93NUMPY", 6) != 0)
    return asc_fail(err, NULL, -1, 0, 0, "not a .npy file (no \\x93NUMPY magic)");
  int major = p[6];
  size_t hl, start;
  if (major == 1) {
    hl = (size_t)p[8] | (size_t)p[9] << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (n < 12) return asc_fail(err, NULL, -1, 0, 0, "truncated .npy header");
    hl = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 | (size_t)p[11] << 24;
    start = 12;
  } else {
    return asc_fail(err, NULL, -1, 0, 0, ".npy version %d is not supported", major);
  }
  if (hl > n - start) return asc_fail(err, NULL, -1, 0, 0, "truncated .npy header");
  if (hl > (1u << 20)) return asc_fail(err, NULL, -1, 0, 0, ".npy header of %zu bytes is too large", hl);
  char *h = malloc(hl + 1);
  if (!h) return asc_fail(err, NULL, -1, 0, 0, "out of memory");
  memcpy(h, p + start, hl);
  h[hl] = '\0';
  int rc = npy_dict(h, out, err);
  free(h);
  if (rc) return rc;
  out->data_off = start + hl;
  size_t bytes;
  if (asc_size_mul((size_t)out->count, (size_t)out->itemsize, &bytes))
    return asc_fail(err, NULL, -1, 0, 0, "shape in .npy header is too large");
  if (bytes > n - out->data_off)
    return asc_fail(err, NULL, -1, 0, 0, ".npy data truncated: %zu bytes expected, %zu present", bytes,
                    n - out->data_off),
           -1;
  return 0;
}
