// ScenarioOption: an option of one scenario's own (averaging's --average-every, a3c's
// --sync-every, exec's --duration), declared by the scenario beside its code:
//   SHAREBENCH_SCENARIO(Averaging, "averaging")
//       ->IntOption("average-every", 10, 1, 100000000, "steps between parameter-averaging rounds")
// and carried in CellConfig::options by name, as text. The flag table (harness/plan/cell_flags.h)
// makes each one a flag of `run` (of `exec` for a scenario that runs a program), `repro` writes it
// back, `list` shows it, the results file stores it; nothing in the core names it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/config/cell_config.h"

namespace sharebench {

struct ScenarioOption {
  enum class Type { kInt, kDouble, kChoice };
  std::string name;           // the flag without its dashes, and the key in CellConfig::options
  Type type = Type::kInt;
  std::string default_value;  // as text, as the flag takes it
  std::string help;
  double min = 0, max = 0;            // kInt, kDouble
  std::vector<std::string> choices;   // kChoice

  // The value as stored: the text checked against the type and range (UsageError otherwise).
  std::string normalize(const std::string& text) const;
  bool operator==(const ScenarioOption& o) const {
    return name == o.name && type == o.type && default_value == o.default_value && min == o.min && max == o.max &&
           choices == o.choices;
  }
};

// A cell's value of a scenario option: its own when given, else the default of the option as some
// registered scenario declares it. Throws std::logic_error for an option nobody declares.
std::int64_t option_int(const CellConfig& cell, std::string_view name);
double option_double(const CellConfig& cell, std::string_view name);
std::string option_text(const CellConfig& cell, std::string_view name);

}  // namespace sharebench
