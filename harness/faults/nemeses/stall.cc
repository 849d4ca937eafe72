// stall: SIGSTOP the victim for the plan's +SECONDS, then SIGCONT (a descheduled VM, a debugger
// pause). Shorter than the hang timeout the run must stay clean (a paused worker is slow, not
// wrong); longer, the watchdog must call it a hang.
#include <signal.h>

#include <stdexcept>

#include <fmt/format.h>

#include "harness/faults/nemesis.h"

namespace sharebench {
namespace {

class StallNemesis final : public Nemesis {
 public:
  std::string_view name() const override { return "stall"; }
  void validate(const FaultPlan& plan, std::string_view spec) const override {
    if (plan.hold_s <= 0) {
      throw std::invalid_argument(fmt::format("fault '{}': a stall needs its length, as in {}", spec,
                                              plan.targets_tree() ? "stall:child@1+5" : "stall:1@10+3"));
    }
  }
  Strike strike(const FaultPlan& /*plan*/, const FaultVictim& victim) const override {
    ::kill(victim.pid, SIGSTOP);
    return Strike::kHeld;
  }
  void release(pid_t pid) const override {
    if (pid > 0) ::kill(pid, SIGCONT);
  }
  bool kills() const override { return false; }
  bool ends_the_run(const FaultPlan& plan, double hang_timeout_s) const override { return plan.hold_s >= hang_timeout_s; }
  std::string describe_rank(const FaultPlan& plan, int rank, std::int64_t step, double hang_timeout_s) const override {
    return fmt::format("rank {} stopped with SIGSTOP at step {} for {} s (hang timeout {} s)", rank, step, plan.hold_s,
                       hang_timeout_s);
  }
  std::string describe_process(const FaultPlan& plan, const std::string& who, double after_s) const override {
    return fmt::format("{} stopped with SIGSTOP for {} s, {:.2f} s after its birth", who, plan.hold_s, after_s);
  }
  // A quarter of the hang timeout (must stay clean) and one and a half (must be a hang).
  std::vector<DrawShare> draw_shares() const override { return {{15, 0.25}, {20, 1.5}}; }
  std::string draw_label(const FaultPlan& plan, double hang_timeout_s) const override {
    return plan.hold_s >= hang_timeout_s ? "stall (long)" : "stall (short)";
  }
};

}  // namespace

std::unique_ptr<Nemesis> make_stall_nemesis() { return std::make_unique<StallNemesis>(); }

}  // namespace sharebench
