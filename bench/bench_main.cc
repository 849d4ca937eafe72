// main() of the benchmark binary: spawn's worker mode first (BM_Launch spawns this binary), then
// the forkserver, started while this process is still clean (as `sharebench run` does), then
// Google Benchmark.
#include <benchmark/benchmark.h>

#include "harness/launch/forkserver.h"
#include "harness/launch/launcher.h"

int main(int argc, char** argv) {
  int worker_exit = 0;
  if (sharebench::maybe_run_as_worker(argc, argv, &worker_exit)) return worker_exit;
  sharebench::ForkServer::instance().start();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  sharebench::ForkServer::instance().stop();
  return 0;
}
