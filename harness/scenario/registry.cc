// ScenarioRegistry and ScenarioInfo: where SHAREBENCH_SCENARIO lines land.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/config/flag_values.h"
#include "harness/scenario/scenario.h"

namespace sharebench {

ScenarioInfo* ScenarioInfo::Variant(std::string name, std::string description) {
  VariantInfo v;
  v.name = std::move(name);
  v.description = std::move(description);
  variants_.push_back(std::move(v));
  return this;
}

ScenarioInfo* ScenarioInfo::KnownBug(std::string name, std::string description, Expectation expect,
                                     int min_procs) {
  VariantInfo v;
  v.name = std::move(name);
  v.description = std::move(description);
  v.known_bug = true;
  v.expect = std::move(expect);
  // A planted bug may also be seen by a sanitizer (a lock that excludes nobody is a data race too):
  // that is no surprise, and no reason to call the cell unexpected.
  if (std::find(v.expect.must_fail.begin(), v.expect.must_fail.end(), checks::kSanitizer) == v.expect.must_fail.end()) {
    v.expect.may_fail.push_back(checks::kSanitizer);
  }
  v.min_procs_for_bug = min_procs;
  variants_.push_back(std::move(v));
  return this;
}

ScenarioInfo* ScenarioInfo::OnlyUnder(std::initializer_list<StartMethod> methods) {
  if (variants_.empty() || !variants_.back().known_bug) {
    throw std::logic_error("OnlyUnder() follows a KnownBug() of scenario " + name_);
  }
  variants_.back().bug_starts.assign(methods.begin(), methods.end());
  return this;
}

ScenarioInfo* ScenarioInfo::MustFailUnderChaos(std::initializer_list<std::string> checks) {
  if (variants_.empty() || !variants_.back().known_bug) {
    throw std::logic_error("MustFailUnderChaos() follows a KnownBug() of scenario " + name_);
  }
  Expectation& e = variants_.back().expect;
  for (const std::string& check : checks) {
    if (std::find(e.may_fail.begin(), e.may_fail.end(), check) == e.may_fail.end()) {
      throw std::logic_error(fmt::format("MustFailUnderChaos(\"{}\"): scenario {} variant {} lists it as no may-fail check",
                                         check, name_, variants_.back().name));
    }
  }
  variants_.back().must_fail_under_chaos.assign(checks.begin(), checks.end());
  return this;
}

ScenarioInfo* ScenarioInfo::LocksEveryStep() {
  if (variants_.empty()) throw std::logic_error("LocksEveryStep() follows a Variant() of scenario " + name_);
  variants_.back().locks_every_step = true;
  return this;
}

ScenarioInfo* ScenarioInfo::VariantOptOut(std::string check, std::string reason) {
  if (variants_.empty()) throw std::logic_error("VariantOptOut() follows a Variant() of scenario " + name_);
  variants_.back().opt_outs.emplace_back(std::move(check), std::move(reason));
  return this;
}

ScenarioInfo* ScenarioInfo::NoRandomFaults(std::string reason) {
  if (variants_.empty() || variants_.back().known_bug) {
    throw std::logic_error("NoRandomFaults() follows a Variant() (not a KnownBug) of scenario " + name_);
  }
  variants_.back().no_random_faults = std::move(reason);
  return this;
}

ScenarioInfo* ScenarioInfo::IntOption(std::string name, std::int64_t default_value, std::int64_t min, std::int64_t max,
                                      std::string help) {
  ScenarioOption o;
  o.name = std::move(name);
  o.type = ScenarioOption::Type::kInt;
  o.default_value = std::to_string(default_value);
  o.min = static_cast<double>(min);
  o.max = static_cast<double>(max);
  o.help = std::move(help);
  options_.push_back(std::move(o));
  return this;
}

ScenarioInfo* ScenarioInfo::DoubleOption(std::string name, double default_value, double min, double max,
                                         std::string help) {
  ScenarioOption o;
  o.name = std::move(name);
  o.type = ScenarioOption::Type::kDouble;
  o.default_value = format_flag_number(default_value);
  o.min = min;
  o.max = max;
  o.help = std::move(help);
  options_.push_back(std::move(o));
  return this;
}

ScenarioInfo* ScenarioInfo::ChoiceOption(std::string name, std::string default_value, std::vector<std::string> choices,
                                         std::string help) {
  ScenarioOption o;
  o.name = std::move(name);
  o.type = ScenarioOption::Type::kChoice;
  o.default_value = std::move(default_value);
  o.choices = std::move(choices);
  o.help = std::move(help);
  options_.push_back(std::move(o));
  return this;
}

ScenarioInfo* ScenarioInfo::Starts(std::initializer_list<StartMethod> methods) {
  starts_.assign(methods.begin(), methods.end());
  return this;
}

const VariantInfo* ScenarioInfo::find_variant(std::string_view v) const {
  for (const auto& info : variants_) {
    if (info.name == v) return &info;
  }
  return nullptr;
}

bool ScenarioInfo::supports(StartMethod m) const {
  return std::find(starts_.begin(), starts_.end(), m) != starts_.end();
}

ScenarioRegistry& ScenarioRegistry::instance() {
  static ScenarioRegistry registry;  // constructed on first use: safe from static initialisers
  return registry;
}

ScenarioInfo* ScenarioRegistry::add(std::unique_ptr<ScenarioInfo> info) {
  if (find(info->name())) {
    throw std::logic_error(fmt::format("scenario '{}' registered twice", info->name()));
  }
  scenarios_.push_back(std::move(info));
  return scenarios_.back().get();
}

const ScenarioInfo* ScenarioRegistry::find(std::string_view name) const {
  for (const auto& s : scenarios_) {
    if (s->name() == name) return s.get();
  }
  return nullptr;
}

std::vector<const ScenarioInfo*> ScenarioRegistry::all() const {
  std::vector<const ScenarioInfo*> out;
  for (const auto& s : scenarios_) out.push_back(s.get());
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
  return out;
}

}  // namespace sharebench
