// Environment: the facts that shape the numbers, recorded in every results file: CPU model and
// cores, kernel, the LibTorch version and the BLAS library actually loaded, threads per worker.
#pragma once

#include <map>
#include <string>

namespace sharebench {

// Other libraries (the LibTorch workload) add their own facts at static-initialisation time.
void set_environment_fact(const std::string& key, const std::string& value);
std::map<std::string, std::string> collect_environment();

// The BLAS shared object mapped into this process ("libopenblas.so.0 (.../openblas-serial)"),
// or "none mapped".
std::string loaded_blas_library();

// True when the environment's BLAS is a build that must not be called from several threads of
// one process at once: OpenBLAS built SINGLE_THREADED without locking (Debian's
// libopenblas0-serial 0.3.21). Under the thread start method such a BLAS computes wrong results:
// measured here as a 0.02 error in the first averaged gradient of averaging/grads-shm, and none
// with the reference BLAS or libopenblas0-pthread.
bool blas_unsafe_for_threads(const std::map<std::string, std::string>& env);

}  // namespace sharebench
