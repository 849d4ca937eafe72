// `liveness`: every worker ran to completion and exited 0. On a hang the message carries the
// wait-for graph the watchdog read while the workers were frozen (the runner has put it in the
// status message).
#include <fmt/format.h>

#include "harness/detectors/detector.h"

namespace sharebench {
namespace {

class LivenessDetector final : public Detector {
 public:
  CheckId id() const override { return checks::kLiveness; }
  DetectorStage stage() const override { return DetectorStage::kAfterWorkers; }
  void judge(const RepetitionEvidence& e, Repetition& rep) const override {
    int failed = 0;
    for (const WorkerRecord& w : rep.workers) {
      const bool finished = e.block->slots[w.rank].phase.load() == static_cast<std::int32_t>(WorkerPhase::kDone);
      failed += (w.exited && w.exit_code == 0 && finished) ? 0 : 1;
    }
    if (rep.status == RunStatus::kCompleted) {
      rep.checks.push_back(Check{id(), Verdict::kPass, 0.0, "every worker ran to completion and exited 0"});
    } else {
      rep.checks.push_back(Check{id(), Verdict::kFail, static_cast<double>(failed),
                                 fmt::format("{}: {}", to_string(rep.status), rep.status_message)});
    }
  }
};

}  // namespace

std::unique_ptr<Detector> make_liveness_detector() { return std::make_unique<LivenessDetector>(); }

}  // namespace sharebench
