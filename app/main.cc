// The sharebench binary: the command line, with the built-in LibTorch scenarios linked in.
//
// Before any library's constructor: OpenBLAS (loaded with LibTorch) starts a thread per core in
// its constructor, and under a process limit (`ulimit -u`) too low for that pool it fails there,
// before main and so before the resource preflight that would refuse the run with one line. So
// when the limit is low and OPENBLAS_NUM_THREADS is unset, the binary re-executes itself from
// .preinit_array (which runs before every shared library's initialiser) with OPENBLAS_NUM_THREADS=1:
// OpenBLAS then starts no thread, and main's preflight speaks. Setting the variable in place is
// not enough: glibc's start-up restores the environment it was given.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "app/run_cli.h"

namespace {
// A limit this low cannot hold a pool per core beside the run itself (docs/security.md).
constexpr rlim_t kLowProcessLimit = 256;
constexpr const char kBlasThreads[] = "OPENBLAS_NUM_THREADS=1";

bool names(const char* entry, const char* variable) {
  const std::size_t n = std::strlen(variable);
  return std::strncmp(entry, variable, n) == 0 && entry[n] == '=';
}

// Async-signal-safe in spirit: runs before malloc's users are initialised, so no allocation but
// a fixed array on the stack.
void one_blas_thread_under_a_low_process_limit(int /*argc*/, char** argv, char** envp) {
  rlimit limit{};
  if (::getuid() == 0 || ::getrlimit(RLIMIT_NPROC, &limit) != 0) return;  // root: the limit does not apply
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= kLowProcessLimit) return;
  constexpr int kMaxEnv = 4096;
  char* env[kMaxEnv + 2];
  int n = 0;
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    if (names(*e, "OPENBLAS_NUM_THREADS")) return;  // the user's own choice stands (and ends a re-exec)
    if (n < kMaxEnv) env[n++] = *e;
  }
  env[n++] = const_cast<char*>(kBlasThreads);
  env[n] = nullptr;
  ::execve("/proc/self/exe", argv, env);  // on failure, go on as before
}

[[maybe_unused]] __attribute__((section(".preinit_array"), used)) void (*const kPreinit)(int, char**, char**) =
    one_blas_thread_under_a_low_process_limit;
}  // namespace

int main(int argc, char** argv) { return sharebench::run_cli(argc, argv); }
