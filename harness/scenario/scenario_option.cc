// Scenario options: checking a value against its declaration, and reading a cell's value
// (scenario_option.h).
#include "harness/scenario/scenario_option.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/config/flag_values.h"
#include "harness/scenario/scenario.h"

namespace sharebench {

std::string ScenarioOption::normalize(const std::string& text) const {
  const std::string flag = "--" + name;
  switch (type) {
    case Type::kInt:
      return std::to_string(parse_flag_int(flag, text, static_cast<std::int64_t>(min), static_cast<std::int64_t>(max)));
    case Type::kDouble: return format_flag_number(parse_flag_double(flag, text, min, max));
    case Type::kChoice:
      if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
        throw UsageError(fmt::format("{} must be {}, got '{}'", flag, fmt::join(choices, " or "), text));
      }
      return text;
  }
  return text;
}

namespace {
const ScenarioOption& declared(std::string_view name) {
  for (const ScenarioInfo* s : ScenarioRegistry::instance().all()) {
    for (const ScenarioOption& o : s->options()) {
      if (o.name == name) return o;
    }
  }
  throw std::logic_error(fmt::format("no registered scenario declares the option --{}", name));
}

std::string value_of(const CellConfig& cell, std::string_view name) {
  const auto it = cell.options.find(std::string(name));
  return it != cell.options.end() ? it->second : declared(name).default_value;
}
}  // namespace

std::int64_t option_int(const CellConfig& cell, std::string_view name) {
  return parse_flag_int("--" + std::string(name), value_of(cell, name), INT64_MIN, INT64_MAX);
}

double option_double(const CellConfig& cell, std::string_view name) {
  return parse_flag_double("--" + std::string(name), value_of(cell, name), -1e300, 1e300);
}

std::string option_text(const CellConfig& cell, std::string_view name) { return value_of(cell, name); }

}  // namespace sharebench
