// Strict reading of flag values, shared by the flag table (harness/plan/cell_flags.h), the
// scenarios' own options and --model: the whole text, in range, or a UsageError with one sentence
// naming the flag, the value and what is allowed.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace sharebench {

// Bad input from the command line (or a file standing for it): one sentence, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::int64_t parse_flag_int(const std::string& flag, const std::string& text, std::int64_t min, std::int64_t max);
double parse_flag_double(const std::string& flag, const std::string& text, double min, double max);
// A duration in seconds: "90", "90s", "10m", "1.5h".
double parse_flag_duration(const std::string& flag, const std::string& text, double min_s, double max_s);
// The shortest text that reads back as exactly `v` ("0.05", "10").
std::string format_flag_number(double v);

}  // namespace sharebench
