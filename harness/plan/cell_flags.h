// cell_flags: the one table of command-line flags that change a cell. `run` reads its options
// through it, and `repro` (and every printed reproduce line) writes a stored CellConfig back
// through it, so a cell re-run from its results file has exactly the stored config. A harness
// option is one row here and a field in CellConfig; an option of one scenario's own is declared by
// the scenario (ScenarioInfo::IntOption and kin) and appears here, in CellConfig::options, in
// `list` and in every reproduce line by itself.
//
// Values are parsed into their final type with range checks (no wrapping, no trailing text); a
// bad value throws UsageError with one sentence naming the flag, the value and what is allowed.
// The matrix axes (--scenario, --start, --procs) are not rows: every reproduce line names them.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/config/cell_config.h"
#include "harness/config/flag_values.h"

namespace sharebench {

struct CellFlag {
  std::string flag;     // "--steps"
  std::string help;     // for --help
  std::string program_help;  // for a command that runs a program, where the flag means something of its ("": help)
  bool list = false;    // takes a comma-separated list (may be repeated)
  bool program = false;  // a command that runs a program takes it too (it changes how that cell is run or judged)
  bool program_only = false;  // only a command that runs a program takes it (`run` has none to apply it to)
  std::string type_name = "TEXT";  // what --help shows after the flag: INT, NUMBER, or the words it takes
  // Sets the config's field from the flag's text; throws UsageError.
  std::function<void(CellConfig&, const std::string&)> parse;
  // The field as the flag takes it.
  std::function<std::string(const CellConfig&)> format;
};

// Every cell flag, in --help order.
const std::vector<CellFlag>& cell_flags();
const CellFlag* find_cell_flag(const std::string& flag);

// Refuses (std::logic_error, naming the scenario) a scenario option named like one of the harness's
// flags or a command's own (--steps, --out, ...): two flags of one name would make every command fail.
void check_option_name(const std::string& scenario, const std::string& option, const std::vector<CellFlag>& harness_flags);

// The arguments (after the binary) that re-run exactly this cell: the axes, then every flag whose
// value differs from the default, then --repetitions when not 1.
std::vector<std::string> repro_args(const CellConfig& cell, int repetitions);
// Quotes an argument for a POSIX shell when it needs it ('…' with embedded quotes escaped).
std::string shell_quote(const std::string& arg);
// binary + repro_args, each argument shell-quoted: safe to paste.
std::string repro_command(const std::string& binary, const CellConfig& cell, int repetitions);

}  // namespace sharebench
