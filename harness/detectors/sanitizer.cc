// `sanitizer`: in a ThreadSanitizer or AddressSanitizer build, any report a worker process made
// (harness/proc/sanitizer_reports.h routes and reads them) fails the cell. No check in a build
// without a sanitizer: it could not fail there.
#include <fmt/format.h>

#include "harness/detectors/detector.h"

namespace sharebench {
namespace {

class SanitizerDetector final : public Detector {
 public:
  CheckId id() const override { return checks::kSanitizer; }
  DetectorStage stage() const override { return DetectorStage::kAfterWorkers; }
  void judge(const RepetitionEvidence& e, Repetition& rep) const override {
    const std::string sanitizer = sanitizer_in_build();
    if (sanitizer.empty() || e.sanitizer == nullptr) return;
    const SanitizerReports& r = *e.sanitizer;
    if (r.reports == 0) {
      rep.checks.push_back(Check{id(), Verdict::kPass, 0.0, fmt::format("{} reported nothing in any worker", sanitizer)});
      return;
    }
    rep.checks.push_back(Check{id(), Verdict::kFail, static_cast<double>(r.reports),
                               fmt::format("{} made {} report(s); the first: {}", sanitizer, r.reports,
                                           r.first_summary.empty() ? std::string("(no summary line)") : r.first_summary)});
  }
};

}  // namespace

std::unique_ptr<Detector> make_sanitizer_detector() { return std::make_unique<SanitizerDetector>(); }

}  // namespace sharebench
