// FaultPlan: the KIND:RANK@STEP[+SECONDS] (and KIND:child[N]@SECONDS) text form, both ways.
#include "harness/config/fault_plan.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace sharebench {

std::string FaultPlan::spec() const {
  if (!active()) return "";
  std::string s;
  switch (target) {
    case FaultTarget::kRank: s = fmt::format("{}:{}@{}", kind, rank, at_step); break;
    case FaultTarget::kChild:
      s = fmt::format("{}:child{}@{}", kind, child == 1 ? std::string() : std::to_string(child), at_s);
      break;
    case FaultTarget::kRandom: s = fmt::format("{}:random@{}", kind, at_s); break;
  }
  if (hold_s > 0) s += fmt::format("+{}", hold_s);
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

// Seconds: a finite number in [0, 3600], no trailing text.
double parse_seconds(std::string_view text, std::string_view what, std::string_view spec, double min_exclusive = -1) {
  const std::string t(text);
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v) || v <= min_exclusive || v < 0 || v > 3600 ||
      t.find_first_not_of("0123456789.") != std::string::npos) {
    throw std::invalid_argument(fmt::format("fault '{}': {} must be a number of seconds from {} to 3600, got '{}'", spec,
                                            what, min_exclusive < 0 ? "0" : "above 0", text));
  }
  return v;
}
}  // namespace

FaultPlan FaultPlan::parse(std::string_view spec) {
  constexpr std::string_view kForm =
      "KIND:RANK@STEP, +SECONDS for a stall (kill:1@20, kill-holding-lock:0@5, stall:1@10+3), or for `exec` "
      "KIND:child[N]@SECONDS or KIND:random@SECONDS (kill:child@1, stall:child2@1+5)";
  FaultPlan plan;
  if (spec.empty() || spec == "none") return plan;
  const auto colon = spec.find(':');
  const auto at = spec.find('@');
  if (colon == std::string_view::npos || at == std::string_view::npos || at < colon) {
    throw std::invalid_argument(fmt::format("fault '{}' is not of the form {}", spec, kForm));
  }
  plan.kind = std::string(spec.substr(0, colon));
  if (plan.kind.empty() || plan.kind.size() > 32 ||
      plan.kind.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") != std::string::npos) {
    throw std::invalid_argument(fmt::format("fault '{}': unknown kind '{}'", spec, plan.kind));
  }
  const std::string_view who = spec.substr(colon + 1, at - colon - 1);
  std::string_view rest = spec.substr(at + 1);
  const auto plus = rest.find('+');
  if (plus != std::string_view::npos) plan.hold_s = parse_seconds(rest.substr(plus + 1), "the hold", spec, 0);
  if (who.rfind("child", 0) == 0 || who == "random") {
    // A process of an exec'd program's tree, at a time.
    if (who == "random") {
      plan.target = FaultTarget::kRandom;
    } else {
      plan.target = FaultTarget::kChild;
      if (who.size() > 5) {
        const std::int64_t n = parse_count(who.substr(5), "the child's number", spec);
        if (n < 1 || n > 1000) throw std::invalid_argument(fmt::format("fault '{}': children are numbered 1..1000", spec));
        plan.child = static_cast<int>(n);
      }
    }
    plan.at_s = parse_seconds(rest.substr(0, plus), "the time", spec);
    return plan;
  }
  const std::int64_t rank = parse_count(who, "the rank", spec);
  if (rank > kMaxFaultRank) {
    throw std::invalid_argument(fmt::format("fault '{}': the rank must be 0..{}", spec, kMaxFaultRank));
  }
  plan.rank = static_cast<int>(rank);
  plan.at_step = parse_count(rest.substr(0, plus), "the step", spec);
  if (plan.at_step < 1) throw std::invalid_argument(fmt::format("fault '{}': the step must be at least 1", spec));
  return plan;
}

}  // namespace sharebench
