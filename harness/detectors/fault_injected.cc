// `fault-injected`: with --fault, whether the fault landed, and where. The verdict names what
// happened: the liveness message and the status carry the fault too.
#include <fmt/format.h>

#include "harness/detectors/detector.h"
#include "harness/faults/fault_injector.h"

namespace sharebench {
namespace {

class FaultInjectedDetector final : public Detector {
 public:
  CheckId id() const override { return checks::kFaultInjected; }
  DetectorStage stage() const override { return DetectorStage::kAfterWorkers; }
  void judge(const RepetitionEvidence& e, Repetition& rep) const override {
    if (e.faults == nullptr) return;  // no --fault, or one a program's supervisor injects itself
    const Check injected = e.faults->check(*e.block);
    for (Check& c : rep.checks) {
      if (c.name == checks::kLiveness) c.message += fmt::format(" [fault: {}]", injected.message);
    }
    rep.status_message += fmt::format(" [fault: {}]", injected.message);
    rep.checks.push_back(injected);
  }
};

}  // namespace

std::unique_ptr<Detector> make_fault_injected_detector() { return std::make_unique<FaultInjectedDetector>(); }

}  // namespace sharebench
