// GoogleTest main for suites that launch workers: the spawn launcher execs this binary, which
// must then run as a worker instead of as a test runner.
#include <gtest/gtest.h>

#include "harness/launch/launcher.h"

int main(int argc, char** argv) {
  int worker_exit = 0;
  if (sharebench::maybe_run_as_worker(argc, argv, &worker_exit)) return worker_exit;
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
