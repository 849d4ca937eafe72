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

namespace {
// A line of '=' alone: TSan's and ASan's frame around each report.
bool is_separator(const std::string& line) {
  return line.size() >= 10 && line.find_first_not_of('=') == std::string::npos;
}

// What a report is about: its SUMMARY line (kind and source line), else its first line.
std::string report_key(const std::string& block) {
  const auto at = block.find("SUMMARY: ");
  if (at != std::string::npos) return block.substr(at, block.find('\n', at) - at);
  return block.substr(0, block.find('\n'));
}

// Distinct reports first, then repeats, each whole, while they fit.
std::string capped_text(const std::vector<std::string>& blocks) {
  std::string text;
  std::vector<bool> taken(blocks.size(), false);
  std::vector<std::string> seen;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      if (taken[i]) continue;
      const std::string key = report_key(blocks[i]);
      const bool fresh = std::find(seen.begin(), seen.end(), key) == seen.end();
      if (pass == 0 && !fresh) continue;
      if (text.size() + blocks[i].size() > kMaxReportBytes) continue;
      text += blocks[i];
      taken[i] = true;
      if (fresh) seen.push_back(key);
    }
  }
  if (text.empty() && !blocks.empty()) text = blocks.front().substr(0, kMaxReportBytes);  // one report too long
  return text;
}
}  // namespace

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
  // Kept to choose from: far more than the cap, not without bound (a report file may be huge).
  constexpr std::size_t kKeptBytes = 64 * kMaxReportBytes;
  std::vector<std::string> blocks;
  std::size_t kept = 0;
  for (const std::string& file : files) {
    std::ifstream in(file);
    std::string line, block;
    const auto close_block = [&] {
      if (!block.empty() && kept + block.size() <= kKeptBytes) {
        kept += block.size();
        blocks.push_back(block);
      }
      block.clear();
    };
    while (std::getline(in, line)) {
      if (line.find("WARNING: ThreadSanitizer:") != std::string::npos ||
          line.find("ERROR: AddressSanitizer:") != std::string::npos ||
          line.find("runtime error:") != std::string::npos) {
        ++out.reports;
      }
      if (out.first_summary.empty() && line.rfind("SUMMARY: ", 0) == 0) out.first_summary = line.substr(9);
      // A report runs from one separator to the next; the closing one ends it.
      if (is_separator(line) && !block.empty() && block.find("SUMMARY: ") != std::string::npos) {
        block += line + "\n";
        close_block();
        continue;
      }
      if (is_separator(line)) close_block();
      block += line + "\n";
    }
    close_block();
  }
  out.text = capped_text(blocks);
  return out;
}

}  // namespace sharebench
