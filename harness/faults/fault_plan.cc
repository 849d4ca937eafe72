// FaultPlan: the KIND:RANK@STEP[+SECONDS] text form, both ways.
#include "harness/faults/fault_plan.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace sharebench {

std::string_view to_string(FaultKind k) {
  switch (k) {
    case FaultKind::kNone: return "none";
    case FaultKind::kKill: return "kill";
    case FaultKind::kKillHoldingLock: return "kill-holding-lock";
    case FaultKind::kStall: return "stall";
  }
  return "?";
}

std::optional<FaultKind> parse_fault_kind(std::string_view s) {
  for (FaultKind k : {FaultKind::kNone, FaultKind::kKill, FaultKind::kKillHoldingLock, FaultKind::kStall}) {
    if (to_string(k) == s) return k;
  }
  return std::nullopt;
}

std::string FaultPlan::spec() const {
  if (!active()) return "";
  std::string s = fmt::format("{}:{}@{}", to_string(kind), rank, at_step);
  if (kind == FaultKind::kStall) s += fmt::format("+{}", stall_s);
  return s;
}

namespace {
// Whole decimal number, no sign, no trailing text.
std::int64_t parse_count(std::string_view text, std::string_view what, std::string_view spec) {
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string_view::npos) {
    throw std::invalid_argument(fmt::format("fault '{}': {} must be a whole number, got '{}'", spec, what, text));
  }
  return std::stoll(std::string(text));
}
}  // namespace

FaultPlan FaultPlan::parse(std::string_view spec) {
  constexpr std::string_view kForm = "KIND:RANK@STEP, +SECONDS for a stall (kill:1@20, kill-holding-lock:0@5, stall:1@10+3)";
  FaultPlan plan;
  if (spec.empty() || spec == "none") return plan;
  const auto colon = spec.find(':');
  const auto at = spec.find('@');
  if (colon == std::string_view::npos || at == std::string_view::npos || at < colon) {
    throw std::invalid_argument(fmt::format("fault '{}' is not of the form {}", spec, kForm));
  }
  const auto kind = parse_fault_kind(spec.substr(0, colon));
  if (!kind || *kind == FaultKind::kNone) {
    throw std::invalid_argument(fmt::format("fault '{}': unknown kind '{}' (kill, kill-holding-lock, stall)", spec,
                                            spec.substr(0, colon)));
  }
  plan.kind = *kind;
  const std::int64_t rank = parse_count(spec.substr(colon + 1, at - colon - 1), "the rank", spec);
  if (rank > kMaxFaultRank) {
    throw std::invalid_argument(fmt::format("fault '{}': the rank must be 0..{}", spec, kMaxFaultRank));
  }
  plan.rank = static_cast<int>(rank);
  std::string_view rest = spec.substr(at + 1);
  const auto plus = rest.find('+');
  plan.at_step = parse_count(rest.substr(0, plus), "the step", spec);
  if (plan.at_step < 1) throw std::invalid_argument(fmt::format("fault '{}': the step must be at least 1", spec));
  if (plan.kind == FaultKind::kStall) {
    if (plus == std::string_view::npos) {
      throw std::invalid_argument(fmt::format("fault '{}': a stall needs its length, as in stall:1@10+3", spec));
    }
    const std::string seconds(rest.substr(plus + 1));
    std::size_t used = 0;
    try {
      plan.stall_s = std::stod(seconds, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != seconds.size() || seconds.empty() || !std::isfinite(plan.stall_s) || plan.stall_s <= 0 ||
        plan.stall_s > 3600) {
      throw std::invalid_argument(
          fmt::format("fault '{}': the stall must be a number of seconds above 0 and at most 3600", spec));
    }
  } else if (plus != std::string_view::npos) {
    throw std::invalid_argument(fmt::format("fault '{}': only a stall takes +SECONDS", spec));
  }
  return plan;
}

}  // namespace sharebench
