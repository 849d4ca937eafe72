/* progress.h: progress reports for `sharebench exec` from a C or C++ program (the same channel as
 * the Python module sharebench_progress: docs/exec.md).
 *
 *   #include <sharebench/progress.h>
 *   sharebench_progress_beat(step);   // this process's units of work so far
 *
 * Appends "PID STEP\n" to the file SHAREBENCH_PROGRESS names, in one write; does nothing outside
 * `sharebench exec`. Header-only, C89-compatible, no dependency on the rest of sharebench. */
#ifndef SHAREBENCH_PROGRESS_H
#define SHAREBENCH_PROGRESS_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void sharebench_progress_beat(long long step) {
  static int fd = -2;
  char line[64];
  int length;
  if (fd == -2) {
    const char* path = getenv("SHAREBENCH_PROGRESS");
    fd = path && *path ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
  }
  if (fd < 0) return;
  length = snprintf(line, sizeof line, "%ld %lld\n", (long)getpid(), step);
  if (length > 0 && write(fd, line, (size_t)length) < 0) { /* the runner is gone: nothing to tell */ }
}

#endif
