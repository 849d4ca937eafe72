// kill: SIGKILL the victim (a crash: the OOM killer, a segfault elsewhere). The run cannot end
// well: liveness must fail, and nothing may be left behind.
#include <signal.h>

#include <stdexcept>

#include <fmt/format.h>

#include "harness/faults/nemesis.h"

namespace sharebench {
namespace {

class KillNemesis final : public Nemesis {
 public:
  std::string_view name() const override { return "kill"; }
  void validate(const FaultPlan& plan, std::string_view spec) const override {
    if (plan.hold_s > 0) throw std::invalid_argument(fmt::format("fault '{}': only a stall takes +SECONDS", spec));
  }
  Strike strike(const FaultPlan& /*plan*/, const FaultVictim& victim) const override {
    ::kill(victim.pid, SIGKILL);
    return Strike::kLanded;
  }
  bool kills() const override { return true; }
  bool ends_the_run(const FaultPlan&, double) const override { return true; }
  std::string describe_rank(const FaultPlan& plan, int rank, std::int64_t step, double) const override {
    return fmt::format("rank {} killed with SIGKILL at step {} (planned at {})", rank, step, plan.at_step);
  }
  std::string describe_process(const FaultPlan&, const std::string& who, double after_s) const override {
    return fmt::format("{} killed with SIGKILL {:.2f} s after its birth", who, after_s);
  }
  std::vector<DrawShare> draw_shares() const override { return {{30, 0}}; }
};

}  // namespace

std::unique_ptr<Nemesis> make_kill_nemesis() { return std::make_unique<KillNemesis>(); }

}  // namespace sharebench
