// Sanitizer reports, routed and read back (harness/detectors/sanitizer.cc makes them a verdict).
// In a ThreadSanitizer or AddressSanitizer build, every worker process (and, under the thread start method, the host process of the worker threads) writes its
// reports to files in the repetition's private directory instead of stderr; after the workers are
// gone the runner reads them back, and a `sanitizer` check fails the cell on any report: a data
// race, a lock-order inversion, a use-after-free. The message names the first report's summary line
// (the kind and the source line); the reports themselves, capped, go into the results.
//
// Not seen: reports of the runner process itself (they stay on its stderr), and anything in a build
// without a sanitizer (no check is added there: it could not fail). Which reports are expected is a
// matter of suppressions (ci/tsan.supp) and of the scenario's OptOut("sanitizer", why).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "harness/results/results.h"

namespace sharebench {

// The sanitizer this binary was built with: "ThreadSanitizer", "AddressSanitizer", or "" for none.
const char* sanitizer_in_build();

// In this process, sends sanitizer reports to <dir>/sanitizer.<pid> (the runtime appends the pid).
// A no-op without a sanitizer or with an empty dir.
void route_sanitizer_reports(const char* dir);

struct SanitizerReports {
  int reports = 0;            // "WARNING: ThreadSanitizer:" / "ERROR: AddressSanitizer:" headers
  std::string first_summary;  // the first SUMMARY line, without its "SUMMARY: " prefix
  // The reports, capped at kMaxReportBytes: first one report of each distinct SUMMARY (each
  // distinct race or error), in the order they came, then the repeats while room is left. Many
  // reports of one race (a loop over a buffer) never crowd another race out of the results.
  std::string text;
};
inline constexpr std::size_t kMaxReportBytes = 64 * 1024;

// Every report file route_sanitizer_reports made under `dir`.
SanitizerReports read_sanitizer_reports(const std::string& dir);

}  // namespace sharebench
