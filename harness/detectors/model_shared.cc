// `model-shared`: every worker that bound a model (bind_parameters, torch_support) kept it in the
// shared arena (harness/checkers/model_sharing.h holds the promise and the verdict; this reads
// each worker's peak private memory for the figure its message gives).
#include <algorithm>
#include <map>

#include "harness/checkers/model_sharing.h"
#include "harness/detectors/detector.h"

namespace sharebench {
namespace {

class ModelSharedDetector final : public Detector {
 public:
  CheckId id() const override { return checks::kModelShared; }
  DetectorStage stage() const override { return DetectorStage::kAfterCheck; }
  void judge(const RepetitionEvidence& e, Repetition& rep) const override {
    std::map<int, double> peak_uss_mb;
    for (const auto& [rank, track] : e.supervision->memory) {
      const WorkerSlot& s = e.block->slots[rank];
      const auto own_kb = std::max(s.uss_kb_at_end.load(), s.uss_kb_while_working.load());
      peak_uss_mb[rank] = std::max(track.peak.uss_mb, static_cast<double>(own_kb) / 1024);
    }
    if (auto shared = model_shared_check(*e.block, peak_uss_mb)) rep.checks.push_back(*shared);
  }
};

}  // namespace

std::unique_ptr<Detector> make_model_shared_detector() { return std::make_unique<ModelSharedDetector>(); }

}  // namespace sharebench
