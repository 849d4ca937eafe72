// results_json: the results file. to_json/from_json for the whole model; the reader rejects
// foreign files (no "format": "sharebench-results") and newer schema versions with one clear line.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/results/results.h"

namespace sharebench {

struct ResultsFormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

nlohmann::json results_to_json(const RunResult& run);
// JSON text of `j`; bytes that are not UTF-8 (a program's output can hold any) become U+FFFD
// instead of an exception that would lose the run. indent -1: one line.
std::string dump_json(const nlohmann::json& j, int indent = -1);
RunResult results_from_json(const nlohmann::json& j);  // throws ResultsFormatError
RunResult read_results_file(const std::string& path);   // throws ResultsFormatError

}  // namespace sharebench
