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

}  // namespace sharebench
