// Sanitizer reports: routing them to files, reading them back, and the check.
#include "harness/proc/sanitizer_reports.h"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHAREBENCH_SANITIZER_NAME "ThreadSanitizer"
#elif __has_feature(address_sanitizer)
#define SHAREBENCH_SANITIZER_NAME "AddressSanitizer"
#endif
#endif
#if !defined(SHAREBENCH_SANITIZER_NAME) && defined(__SANITIZE_THREAD__)
#define SHAREBENCH_SANITIZER_NAME "ThreadSanitizer"
#endif
#if !defined(SHAREBENCH_SANITIZER_NAME) && defined(__SANITIZE_ADDRESS__)
#define SHAREBENCH_SANITIZER_NAME "AddressSanitizer"
#endif

#ifdef SHAREBENCH_SANITIZER_NAME
extern "C" void __sanitizer_set_report_path(const char* path);  // the sanitizer runtime's interface
#endif

namespace sharebench {

const char* sanitizer_in_build() {
#ifdef SHAREBENCH_SANITIZER_NAME
  return SHAREBENCH_SANITIZER_NAME;
#else
  return "";
#endif
}

void route_sanitizer_reports(const char* dir) {
#ifdef SHAREBENCH_SANITIZER_NAME
  if (dir == nullptr || dir[0] == '\0') return;
  // The runtime keeps the pointer: a static buffer, one per process (the thread host sets it once).
  static char path[512];
  std::snprintf(path, sizeof path, "%s/sanitizer", dir);
  __sanitizer_set_report_path(path);
#else
  (void)dir;
#endif
}

SanitizerReports read_sanitizer_reports(const std::string& dir) {
  SanitizerReports out;
  std::vector<std::string> files;
  if (std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), &::closedir); d) {
    while (const dirent* e = ::readdir(d.get())) {
      const std::string name = e->d_name;
      if (name.rfind("sanitizer.", 0) == 0) files.push_back(dir + "/" + name);
    }
  }
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      if (line.find("WARNING: ThreadSanitizer:") != std::string::npos ||
          line.find("ERROR: AddressSanitizer:") != std::string::npos ||
          line.find("runtime error:") != std::string::npos) {
        ++out.reports;
      }
      if (out.first_summary.empty() && line.rfind("SUMMARY: ", 0) == 0) out.first_summary = line.substr(9);
      if (out.text.size() < kMaxReportBytes) out.text += line + "\n";
    }
  }
  if (out.text.size() > kMaxReportBytes) out.text.resize(kMaxReportBytes);
  return out;
}

}  // namespace sharebench
