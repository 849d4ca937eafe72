// GoogleTest main for suites that launch workers: the spawn launcher execs this binary, which
// must then run as a worker instead of as a test runner. The forkserver is started here, before
// any test, as `sharebench run` does: started lazily by the first forkserver cell, it would be
// forked from whatever state that cell's setup left, threads holding locks included
// (fork/threads-holding-lock under ctest, which runs each test alone, caught exactly that).
#include <gtest/gtest.h>

#include "harness/launch/forkserver.h"
#include "harness/launch/launcher.h"

int main(int argc, char** argv) {
  int worker_exit = 0;
  if (sharebench::maybe_run_as_worker(argc, argv, &worker_exit)) return worker_exit;
  ::testing::InitGoogleTest(&argc, argv);
  sharebench::ForkServer::instance().start();
  const int result = RUN_ALL_TESTS();
  sharebench::ForkServer::instance().stop();
  return result;
}
