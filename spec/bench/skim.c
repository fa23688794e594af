/* The structural skim for `make bench`: finds every event's extent in a trace (the objects
 * directly inside the first array, as in a bare array or {"traceEvents": [...]}) by its
 * brackets and strings alone, parsing nothing, on one core. It is the practical limit a scan of
 * the same file can reach here; the bench prints ascope's times as ratios to it. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
  static char buf[1 << 20];
  size_t n;
  long long events = 0, span = 0, base = 0;
  int depth = 0, array_depth = -1, in_string = 0, escaped = 0;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    const char *p = buf, *end = buf + n;
    while (p < end) {
      if (in_string) {
        if (escaped) {
          escaped = 0;
          p++;
          continue;
        }
        /* the next quote or backslash: memchr's vector loop does the long call stacks */
        const char *q = memchr(p, '"', (size_t)(end - p));
        const char *b = memchr(p, '\\', (size_t)((q ? q : end) - p));
        if (b) {
          escaped = 1;
          p = b + 1;
        } else if (q) {
          in_string = 0;
          p = q + 1;
        } else {
          p = end;
        }
        continue;
      }
      char c = *p++;
      if (c == '"') {
        in_string = 1;
      } else if (c == '{' || c == '[') {
        if (c == '[' && array_depth < 0) array_depth = depth + 1;
        if (c == '{' && depth == array_depth) {
          events++;
          span -= base + (long long)(p - buf) - 1;
        }
        depth++;
      } else if (c == '}' || c == ']') {
        depth--;
        if (c == '}' && depth == array_depth) span += base + (long long)(p - buf);
      }
    }
    base += (long long)n;
  }
  fclose(f);
  printf("%lld events, %lld bytes in them\n", events, span);
  return depth == 0 && !in_string ? 0 : 1;
}
