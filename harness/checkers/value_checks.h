// Small checkers over numbers a scenario computed: a value that must (or must not) have changed,
// a difference within a tolerance, a loss that converged as well as a reference run's. Each one
// turns numbers into a pass/fail verdict with a message that says what was compared, so every
// scenario reports them the same way. The LibTorch forms (parameters of a module) are in
// torch_support/parameter_checks.h.
#pragma once

#include <cstdint>
#include <string>

#include "harness/results/check_ids.h"

namespace sharebench {

class CheckContext;

// Fails when `after` equals `before`: the shared state never moved (updates went elsewhere).
void check_changed(CheckContext& ctx, const std::string& name, std::uint64_t before, std::uint64_t after,
                   const std::string& what);
// Fails when `after` differs from `before`: a read-only run wrote.
void check_unchanged(CheckContext& ctx, const std::string& name, std::uint64_t before, std::uint64_t after,
                     const std::string& what);
// Fails when `difference` is above `tolerance` or not a number.
void check_within(CheckContext& ctx, const std::string& name, double difference, double tolerance,
                  const std::string& what);

// A run converged when its loss is at most reference × (1 + relative) + absolute. The defaults are
// every built-in strategy's tolerance and compare's when a run lacks one (measured spread:
// docs/scenarios.md).
struct ConvergenceTolerance {
  double relative = 0.15;
  double absolute = 0.05;
};
// `convergence`: the loss against a reference run's (serial, large-batch); records both and the
// limit as metrics (heldout_loss, serial_heldout_loss, heldout_loss_limit).
void check_convergence(CheckContext& ctx, double loss, double reference_loss, ConvergenceTolerance tolerance,
                       const std::string& reference_name, const std::string& name = checks::kConvergence);

}  // namespace sharebench
