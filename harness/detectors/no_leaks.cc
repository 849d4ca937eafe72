// `no-leaks`: after every repetition, with the arena, the scenario and every worker gone, nothing
// of the repetition remains: no descriptor of the runner, no run-prefixed /dev/shm entry, no
// process, and no descriptor a worker process left open after work() (each reported it itself).
// The runner then removes what remained (harness/proc/leak_check.h): a run never leaves debris.
#include "harness/detectors/detector.h"

namespace sharebench {
namespace {

class NoLeaksDetector final : public Detector {
 public:
  CheckId id() const override { return checks::kNoLeaks; }
  DetectorStage stage() const override { return DetectorStage::kAfterTeardown; }
  void judge(const RepetitionEvidence& e, Repetition& rep) const override {
    rep.checks.push_back(compare_resources(*e.resources_before, *e.resources_after, e.worker_fd_leaks));
  }
};

}  // namespace

std::unique_ptr<Detector> make_no_leaks_detector() { return std::make_unique<NoLeaksDetector>(); }

}  // namespace sharebench
