// parse_fault_plan, nemesis_of and what every nemesis shares (nemesis.h).
#include "harness/faults/nemesis.h"

#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sharebench {

std::string Nemesis::describe_missed(const FaultPlan& plan, int rank, std::int64_t steps) const {
  return fmt::format("not injected: rank {} ended at step {}, before step {}", rank, steps, plan.at_step);
}

const Nemesis& nemesis_of(const FaultPlan& plan) {
  const Nemesis* n = NemesisRegistry::instance().find(plan.kind);
  if (!n) throw std::logic_error(fmt::format("no nemesis of kind '{}' is registered", plan.kind));
  return *n;
}

FaultPlan parse_fault_plan(std::string_view spec) {
  const FaultPlan plan = FaultPlan::parse(spec);
  if (!plan.active()) return plan;
  const Nemesis* n = NemesisRegistry::instance().find(plan.kind);
  if (!n) {
    throw std::invalid_argument(fmt::format("fault '{}': unknown kind '{}' ({})", spec, plan.kind,
                                            fmt::join(NemesisRegistry::instance().keys(), ", ")));
  }
  n->validate(plan, spec);
  return plan;
}

}  // namespace sharebench
