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

// The registry as `list --format json` prints it.
nlohmann::json registry_catalog() {
  nlohmann::json out = nlohmann::json::array();
  for (const ScenarioInfo* s : ScenarioRegistry::instance().all()) {
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
    out.push_back({{"name", s->name()}, {"description", s->description()}, {"kind", to_string(s->kind())},
                   {"starts", starts_of(s->starts())}, {"min_procs", s->min_procs()}, {"options", options_of(*s)},
                   {"variants", variants}, {"opted_out", opt_outs_of(s->opt_outs())}});
  }
  return out;
}

// The text form, read from the JSON form: one rendering whether the scenarios are registered in
// this binary or read from the catalog the LibTorch binary wrote at build time.
void print_catalog_text(const nlohmann::json& catalog) {
  for (const nlohmann::json& s : catalog) {
    fmt::print("{}: {} [{}]\n", s.at("name").get<std::string>(), s.at("description").get<std::string>(),
               fmt::join(s.at("starts").get<std::vector<std::string>>(), ", "));
    for (const nlohmann::json& o : s.at("options")) {
      fmt::print("  --{} ({}, default {}): {}\n", o.at("name").get<std::string>(), o.at("type").get<std::string>(),
                 o.at("default").get<std::string>(), o.at("help").get<std::string>());
    }
    const std::string name = s.at("name").get<std::string>();
    for (const nlohmann::json& v : s.at("variants")) {
      const bool known_bug = v.at("known_bug").get<bool>();
      fmt::print("  {}/{}{}: {}\n", name, v.at("name").get<std::string>(), known_bug ? " (known bug)" : "",
                 v.at("description").get<std::string>());
      if (known_bug) {
        const auto bug_starts = v.at("bug_starts").get<std::vector<std::string>>();
        fmt::print("      must be caught by: {} (at {}+ processes{})\n",
                   fmt::join(v.at("must_fail").get<std::vector<std::string>>(), ", "), v.at("min_procs_for_bug").get<int>(),
                   bug_starts.empty() ? "" : fmt::format(", under {} only", fmt::join(bug_starts, ", ")));
      }
      const std::string not_soaked = v.at("not_soaked").get<std::string>();
      if (!not_soaked.empty()) fmt::print("      not soaked: {}\n", not_soaked);
      for (const auto& [check, why] : v.at("opted_out").items()) {
        fmt::print("      no `{}` check: {}\n", check, why.get<std::string>());
      }
    }
    for (const auto& [check, why] : s.at("opted_out").items()) {
      fmt::print(check == "soak" ? "  (not soaked: {1})\n" : "  (no `{0}` check: {1})\n", check, why.get<std::string>());
    }
  }
}

std::function<std::optional<nlohmann::json>()>& catalog_source() {
  static std::function<std::optional<nlohmann::json>()> source;
  return source;
}
}  // namespace

void use_scenario_catalog(std::function<std::optional<nlohmann::json>()> source) { catalog_source() = std::move(source); }

std::function<int()> add_list_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("list", "list scenarios and their variants");
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("--format", *format, "text or json")->check(one_of({"text", "json"}));
  return [format]() -> int {
    std::optional<nlohmann::json> catalog;
    if (catalog_source()) {
      catalog = catalog_source()();
      if (!catalog) return kExitInternal;  // the source said why on stderr
    } else {
      catalog = registry_catalog();
    }
    if (*format == "json") {
      std::puts(catalog->dump(2).c_str());
    } else {
      print_catalog_text(*catalog);
    }
    return kExitOk;
  };
}

}  // namespace sharebench::cli
