// `memory`: no worker's private memory kept growing past the bound while it worked
// (harness/proc/memory_probe.h: from a quarter of the way through to the end). Only when some
// worker was sampled often enough (not under threads: they share one process), and not under
// AddressSanitizer, whose quarantine keeps freed memory private for a while.
#include <algorithm>

#include <fmt/format.h>

#include "harness/detectors/detector.h"

namespace sharebench {
namespace {

struct WorstGrowth {
  double mb = 0, from = 0, to = 0;
  int rank = -1, measured = 0;
  double samples = 0;  // taken while workers ran, over every worker: the check's exposure
  bool start_to_end = false;  // judged on the readings as work() began and returned (too short for samples)
};

// A work() too short for 4 samples: its growth from the reading as it began to the one as it
// returned (worker_entry.cc), so a worker that grows 50 MiB in 0.1 s still gets a verdict.
WorstGrowth worst_start_to_end(const HarnessBlock& block, int workers, double samples) {
  WorstGrowth worst;
  worst.samples = samples;
  worst.start_to_end = true;
  for (int rank = 0; rank < workers; ++rank) {
    const double from = static_cast<double>(block.slots[rank].uss_kb_at_start.load()) / 1024;
    const double to = static_cast<double>(block.slots[rank].uss_kb_at_end.load()) / 1024;
    if (from <= 0 || to <= 0) continue;
    ++worst.measured;
    if (worst.rank < 0 || to - from > worst.mb) {
      worst.mb = to - from, worst.from = from, worst.to = to, worst.rank = rank;
    }
  }
  return worst;
}

WorstGrowth worst_growth(const Supervision& sup, const HarnessBlock& block) {
  WorstGrowth worst;
  double samples = 0;
  for (const auto& [rank, track] : sup.memory) samples += static_cast<double>(track.while_running.size());
  for (const auto& [rank, track] : sup.memory) {
    double a = 0, b = 0;
    // The later of the worker's own readings: as work() returned, and its last while it worked.
    const double end_mb = static_cast<double>(std::max(block.slots[rank].uss_kb_at_end.load(),
                                                       block.slots[rank].uss_kb_while_working.load())) / 1024;
    const auto growth = track.sustained_growth_mb(end_mb, &a, &b);
    if (!growth) continue;
    ++worst.measured;
    if (worst.rank < 0 || *growth > worst.mb) worst = WorstGrowth{*growth, a, b, rank, worst.measured};
  }
  worst.samples = samples;
  return worst;
}

class MemoryDetector final : public Detector {
 public:
  CheckId id() const override { return checks::kMemory; }
  DetectorStage stage() const override { return DetectorStage::kAfterCheck; }
  void judge(const RepetitionEvidence& e, Repetition& rep) const override {
    WorstGrowth worst = worst_growth(*e.supervision, *e.block);
    // No check under ASan, whose quarantine keeps freed memory private for a while, nor under
    // threads, where there is no figure per worker; the figures stay.
    if (std::string_view(sanitizer_in_build()) == "AddressSanitizer" || e.cell->start == StartMethod::kThread) return;
    if (worst.measured == 0) worst = worst_start_to_end(*e.block, e.cell->procs, worst.samples);
    if (worst.measured == 0) {
      // Too short to judge: said so, rather than no check at all (a worker growing 50 MiB in 0.1 s).
      rep.checks.push_back(Check{
          id(), Verdict::kNotExercised, std::nullopt,
          fmt::format("no worker ran long enough to judge its growth: {:.0f} sample(s) of private memory were taken "
                      "while workers ran, and growth needs 4 from one worker (one every 0.1 s): more --steps",
                      worst.samples),
          Exposure{worst.samples, "memory samples taken while workers ran"}});
      return;
    }
    // A worker's private memory holds its gradients (the model's size again) and the allocator's
    // caches for activations: with a large model the bound grows with it, 8 times its bytes. Read
    // after check(), where a scenario records model_bytes.
    const auto model = rep.metrics.find("model_bytes");
    const double model_mb = model == rep.metrics.end() ? 0 : model->second / (1 << 20);
    const CellConfig& cell = *e.cell;
    const double bound = std::max(cell.max_growth_mb, 8 * model_mb);
    const std::string bound_text = bound > cell.max_growth_mb
                                       ? fmt::format("{:.0f} MiB (8 x the model's {:.1f} MiB)", bound, model_mb)
                                       : fmt::format("{} MiB (--max-growth-mb)", cell.max_growth_mb);
    const std::string detail = fmt::format(
        "rank {}'s private memory (USS) went from {:.1f} MiB {} to {:.1f} MiB at the end", worst.rank, worst.from,
        worst.start_to_end ? "as its work began (too short for samples: judged on its first and last readings)"
                           : "a quarter of the way through its work",
        worst.to);
    const Exposure exposure = worst.start_to_end ? Exposure{static_cast<double>(worst.measured), "workers read as their work began and ended"}
                                                 : Exposure{worst.samples, "memory samples taken while workers ran"};
    if (worst.mb > bound) {
      rep.checks.push_back(Check{id(), Verdict::kFail, worst.mb,
                                 fmt::format("{}: it kept growing, {:.1f} MiB, past the bound of {}", detail,
                                             worst.mb, bound_text),
                                 exposure});
      return;
    }
    rep.checks.push_back(Check{id(), Verdict::kPass, worst.mb,
                               fmt::format("{} ({} worker(s) sampled; the most any grew, within {}); {}", detail,
                                           worst.measured, bound_text, exposure_text(exposure, "more --steps")),
                               exposure});
  }
};

}  // namespace

std::unique_ptr<Detector> make_memory_detector() { return std::make_unique<MemoryDetector>(); }

}  // namespace sharebench
