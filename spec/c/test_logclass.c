/* The log-line classifier on a small file: which lines reach the callback, with which line
 * numbers, rules and fields; CRLF, a last line without its end, a line longer than the read
 * buffer; a pattern outside the linear subset without a slow matcher is an error naming it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/logclass.h"
#include "ctest.h"

typedef struct seen {
  long long number[16];
  size_t nmatched[16], len[16];
  int is_error[16], cut[16];
  char field[16][32];
  int n;
} seen;

static int on_line(void *ud, const asc_logclass_line *ln) {
  seen *s = ud;
  if (s->n >= 16) return 1;
  s->number[s->n] = ln->number;
  s->nmatched[s->n] = ln->nmatched;
  s->len[s->n] = ln->len;
  s->is_error[s->n] = ln->is_error;
  s->cut[s->n] = ln->cut;
  snprintf(s->field[s->n], sizeof s->field[0], "%.*s", ln->fields[0].p ? (int)ln->fields[0].n : 0,
           ln->fields[0].p ? ln->fields[0].p : "");
  s->n++;
  return 0;
}

int main(void) {
  char path[] = "/tmp/ascope-test-logclass-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  FILE *f = fdopen(fd, "wb");
  fputs("[INFO] RT: fine\r\n", f);
  fputs("[ERROR] RT: disk full id=7\r\n", f);
  fputs("[WARNING] RT: ras=1 id=8\n", f);
  fputs("[INFO] RT: an [ERROR] quoted\n", f);
  fputs("[ERROR] RT: ", f);
  for (int i = 0; i < 5 * 1024 * 1024; i++) fputc('x', f);
  fputs(" disk full\n", f);
  fputs("[ERROR] RT: disk full at the end id=9", f);
  fclose(f);

  const char *lits[] = {"[ERROR]", "ras="};
  const char *disk[] = {"disk full"}, *ras[] = {"ras=%d+"}, *id[] = {"id=(%d+)"};
  asc_logclass_rule rules[] = {{ASC_LC_ANY, 0, disk, 1, NULL, 0}, {ASC_LC_ANY, 1, ras, 1, NULL, 0}};
  asc_logclass_field fields[] = {{id, 1}};
  asc_logclass_spec spec = {
      lits, 2, "^%[(%u+)%]%s+(%w+):%s*(.*)$", 1, 2, 0, 3, NULL, 0, "ERROR", "[ERROR]", rules, 2, fields, 1};
  asc_logclass *lc;
  asc_error err;
  CHECK(asc_logclass_new(&spec, &lc, &err) == 0);
  CHECK(asc_logclass_slow_count(lc) == 0);
  seen s;
  memset(&s, 0, sizeof s);
  CHECK(asc_logclass_scan(lc, path, on_line, &s, &err) == 0);
  CHECK(s.n == 4);
  CHECK(s.number[0] == 2 && s.nmatched[0] == 1 && s.is_error[0] && strcmp(s.field[0], "7") == 0);
  CHECK(s.len[0] == strlen("[ERROR] RT: disk full id=7")); /* without its CR */
  CHECK(s.number[1] == 3 && s.nmatched[1] == 1 && !s.is_error[1] && strcmp(s.field[1], "8") == 0);
  /* line 4 holds [ERROR] but is an INFO line no rule matches: not reported; line 5 is cut */
  CHECK(s.number[2] == 5 && s.cut[2] && s.len[2] == ASC_LOGCLASS_LINE_MAX && s.nmatched[2] == 0 &&
        s.is_error[2]);
  CHECK(s.number[3] == 6 && s.nmatched[3] == 1 && strcmp(s.field[3], "9") == 0);
  asc_logclass_free(lc);

  /* a pattern outside the subset, and no slow matcher to give it to */
  const char *lazy[] = {"disk.-full"};
  asc_logclass_rule r2[] = {{ASC_LC_ANY, 0, lazy, 1, NULL, 0}};
  spec.rules = r2;
  spec.nrules = 1;
  CHECK(asc_logclass_new(&spec, &lc, &err) == 0);
  CHECK(asc_logclass_slow_count(lc) == 1);
  int slow = 0;
  CHECK(strcmp(asc_logclass_pattern(lc, 0, &slow), "disk.-full") == 0 && slow == 1);
  memset(&s, 0, sizeof s);
  CHECK(asc_logclass_scan(lc, path, on_line, &s, &err) == -1);
  CHECK(strstr(err.msg, "disk.-full") != NULL && strstr(err.file, "ascope-test-logclass") != NULL &&
        err.line == 2);
  asc_logclass_free(lc);

  /* a line layout outside the subset is refused with its text */
  spec.header = "^(%w+)x";
  CHECK(asc_logclass_new(&spec, &lc, &err) == -1 && strstr(err.msg, "^(%w+)x") != NULL);
  remove(path);
  CTEST_END();
}
