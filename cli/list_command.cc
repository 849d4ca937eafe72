// `sharebench list`: the registered scenarios, their own options, their variants and what each
// known bug must produce; as text or JSON.
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "harness/scenario/scenario.h"

namespace sharebench::cli {

namespace {
std::vector<std::string> starts_of(const std::vector<StartMethod>& methods) {
  std::vector<std::string> names;
  for (StartMethod m : methods) names.emplace_back(to_string(m));
  return names;
}

// {"check": "why not here", ...}
nlohmann::json opt_outs_of(const std::vector<std::pair<std::string, std::string>>& opt_outs) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [check, why] : opt_outs) out[check] = why;
  return out;
}

const char* type_word(ScenarioOption::Type t) {
  switch (t) {
    case ScenarioOption::Type::kInt: return "int";
    case ScenarioOption::Type::kDouble: return "number";
    case ScenarioOption::Type::kChoice: return "choice";
  }
  return "?";
}

// [{"name": "average-every", "type": "int", "default": "10", "help": …, "min": 1, "max": …}, …]
nlohmann::json options_of(const ScenarioInfo& s) {
  nlohmann::json out = nlohmann::json::array();
  for (const ScenarioOption& o : s.options()) {
    nlohmann::json j{{"name", o.name}, {"flag", "--" + o.name}, {"type", type_word(o.type)},
                     {"default", o.default_value}, {"help", o.help}};
    if (o.type == ScenarioOption::Type::kChoice) {
      j["choices"] = o.choices;
    } else {
      j["min"] = o.min;
      j["max"] = o.max;
    }
    out.push_back(std::move(j));
  }
  return out;
}
}  // namespace

std::function<int()> add_list_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("list", "list scenarios and their variants");
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("--format", *format, "text or json")->check(one_of({"text", "json"}));
  return [format] {
    const auto all = ScenarioRegistry::instance().all();
    if (*format == "json") {
      nlohmann::json out = nlohmann::json::array();
      for (const ScenarioInfo* s : all) {
        nlohmann::json variants = nlohmann::json::array();
        for (const auto& v : s->variants()) {
          variants.push_back({{"name", v.name},
                              {"description", v.description},
                              {"known_bug", v.known_bug},
                              {"must_fail", v.expect.must_fail},
                              {"may_fail", v.expect.may_fail},
                              {"min_procs_for_bug", v.min_procs_for_bug},
                              {"bug_starts", starts_of(v.bug_starts)},
                              {"locks_every_step", v.locks_every_step},
                              {"not_soaked", v.no_random_faults},
                              {"opted_out", opt_outs_of(v.opt_outs)}});
        }
        const std::vector<std::string> starts = starts_of(s->starts());
        out.push_back({{"name", s->name()}, {"description", s->description()}, {"kind", to_string(s->kind())},
                       {"starts", starts}, {"min_procs", s->min_procs()}, {"options", options_of(*s)}, {"variants", variants},
                       {"opted_out", opt_outs_of(s->opt_outs())}});
      }
      std::puts(out.dump(2).c_str());
      return kExitOk;
    }
    for (const ScenarioInfo* s : all) {
      const std::vector<std::string> starts = starts_of(s->starts());
      fmt::print("{}: {} [{}]\n", s->name(), s->description(), fmt::join(starts, ", "));
      for (const ScenarioOption& o : s->options()) {
        fmt::print("  --{} ({}, default {}): {}\n", o.name, type_word(o.type), o.default_value, o.help);
      }
      for (const auto& v : s->variants()) {
        fmt::print("  {}/{}{}: {}\n", s->name(), v.name, v.known_bug ? " (known bug)" : "", v.description);
        if (v.known_bug) {
          fmt::print("      must be caught by: {} (at {}+ processes{})\n", fmt::join(v.expect.must_fail, ", "),
                     v.min_procs_for_bug,
                     v.bug_starts.empty() ? "" : fmt::format(", under {} only", fmt::join(starts_of(v.bug_starts), ", ")));
        }
        if (!v.no_random_faults.empty()) fmt::print("      not soaked: {}\n", v.no_random_faults);
        for (const auto& [check, why] : v.opt_outs) fmt::print("      no `{}` check: {}\n", check, why);
      }
      for (const auto& [check, why] : s->opt_outs()) {
        fmt::print(check == "soak" ? "  (not soaked: {1})\n" : "  (no `{0}` check: {1})\n", check, why);
      }
    }
    return kExitOk;
  };
}

}  // namespace sharebench::cli
