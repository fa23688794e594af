/* Runs a command and prints "<wall seconds> <peak RSS KiB> <exit code>" for `make bench`. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    execvp(argv[1], argv + 1);
    _exit(127);
  }
  int st;
  struct rusage ru;
  wait4(pid, &st, 0, &ru);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("%.3f %ld %d\n", secs, ru.ru_maxrss, WIFEXITED(st) ? WEXITSTATUS(st) : 128);
  return 0;
}
