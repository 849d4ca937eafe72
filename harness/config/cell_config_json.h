// cell_config_json: CellConfig's JSON mapping, nlohmann/json's type macros over the plain structs,
// for the files that read or write configs (the results file, spawn's worker command line). A field
// added to CellConfig or WorkloadOptions is written and read with no other change; a field missing
// from an older file takes its default.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/config/cell_config.h"

namespace sharebench {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WorkloadOptions, steps, batch, lr, momentum, input, hidden, classes,
                                                train_rows, test_rows, threads_per_worker, seed, step_delay_us,
                                                model, input_shape, input_dtype)

// Enums are words; an unknown word is an error, not the first value.
inline void to_json(nlohmann::json& j, StartMethod m) { j = std::string(to_string(m)); }
inline void from_json(const nlohmann::json& j, StartMethod& m) {
  const auto parsed = parse_start_method(j.get<std::string>());
  if (!parsed) throw std::invalid_argument("unknown start method '" + j.get<std::string>() + "'");
  m = *parsed;
}
// A fault is its spec ("kill:1@20"; "" when none).
inline void to_json(nlohmann::json& j, const FaultPlan& f) { j = f.spec(); }
inline void from_json(const nlohmann::json& j, FaultPlan& f) { f = FaultPlan::parse(j.get<std::string>()); }

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CellConfig, scenario, variant, start, procs, repetition, workload,
                                                hang_timeout_s, deadline_s, fault, arena_mb, max_growth_mb, stacks,
                                                disabled_checks, chaos_seed, command, workdir, options)

}  // namespace sharebench
