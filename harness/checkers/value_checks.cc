// The value checkers.
#include "harness/checkers/value_checks.h"

#include <cmath>

#include <fmt/format.h>

#include "harness/scenario/scenario.h"

namespace sharebench {

void check_changed(CheckContext& ctx, const std::string& name, std::uint64_t before, std::uint64_t after,
                   const std::string& what) {
  const bool moved = before != after;
  ctx.check(name, moved ? Verdict::kPass : Verdict::kFail, moved ? 1.0 : 0.0,
            moved ? fmt::format("{} moved from their published values", what)
                  : fmt::format("{} are bit for bit as published: no update reached them", what));
}

void check_unchanged(CheckContext& ctx, const std::string& name, std::uint64_t before, std::uint64_t after,
                     const std::string& what) {
  const bool same = before == after;
  ctx.check(name, same ? Verdict::kPass : Verdict::kFail, same ? 0.0 : 1.0,
            same ? fmt::format("{} are bit for bit as published", what)
                 : fmt::format("{} changed during a read-only run (checksum {:016x} → {:016x})", what, before, after));
}

void check_within(CheckContext& ctx, const std::string& name, double difference, double tolerance,
                  const std::string& what) {
  const bool ok = difference <= tolerance;  // false for NaN
  ctx.check(name, ok ? Verdict::kPass : Verdict::kFail, difference,
            fmt::format("{} differs by {:.3g} (tolerance {})", what, difference, tolerance));
}

void check_convergence(CheckContext& ctx, double loss, double reference_loss, ConvergenceTolerance tolerance,
                       const std::string& reference_name, const std::string& name) {
  const double limit = reference_loss * (1 + tolerance.relative) + tolerance.absolute;
  ctx.metric("heldout_loss", loss);
  ctx.metric("serial_heldout_loss", reference_loss);
  ctx.metric("heldout_loss_limit", limit);
  const bool ok = std::isfinite(loss) && loss <= limit;
  ctx.check(name, ok ? Verdict::kPass : Verdict::kFail, loss,
            fmt::format("held-out loss {:.4f} against {:.4f} for {} (limit {:.4f})", loss, reference_loss,
                        reference_name, limit));
}

}  // namespace sharebench
