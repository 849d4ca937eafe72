// Environment: facts read from /proc and uname, plus those other parts registered.
#include "harness/env/environment.h"

#include <dlfcn.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>

namespace sharebench {

namespace {
std::map<std::string, std::string>& extra_facts() {
  static std::map<std::string, std::string> facts;
  return facts;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}
}  // namespace

void set_environment_fact(const std::string& key, const std::string& value) { extra_facts()[key] = value; }

std::string loaded_blas_library() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::set<std::string> found;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string base = path.substr(path.rfind('/') + 1);
    for (const char* name : {"libblas", "libopenblas", "libmkl_rt", "libmkl_core", "libblis", "libatlas"}) {
      if (base.rfind(name, 0) == 0) found.insert(path);
    }
  }
  if (found.empty()) return "none mapped";
  std::string out;
  for (const auto& p : found) out += (out.empty() ? "" : ", ") + p;
  return out;
}

bool blas_unsafe_for_threads(const std::map<std::string, std::string>& env) {
  auto it = env.find("blas_config");
  return it != env.end() && it->second.find("SINGLE_THREADED") != std::string::npos;
}

std::map<std::string, std::string> collect_environment() {
  std::map<std::string, std::string> env = extra_facts();
  utsname u{};
  ::uname(&u);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  env["host"] = host;
  env["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  env["cpu_model"] = cpu_model();
  env["cores"] = std::to_string(std::thread::hardware_concurrency());
  // A binary without LibTorch (the command-line front) states why it maps none.
  if (!env.count("blas")) env["blas"] = loaded_blas_library();
  // OpenBLAS names its build: "... SINGLE_THREADED" is Debian's serial variant, which is not safe
  // to call from several threads at once (see blas_unsafe_for_threads).
  using GetConfig = const char* (*)();
  if (auto get = reinterpret_cast<GetConfig>(::dlsym(RTLD_DEFAULT, "openblas_get_config"))) env["blas_config"] = get();
#if defined(__clang__)
  env["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
  env["compiler"] = "gcc " __VERSION__;
#endif
  return env;
}

}  // namespace sharebench
