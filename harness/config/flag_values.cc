// Strict number parsing for flags (flag_values.h).
#include "harness/config/flag_values.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace sharebench {

std::int64_t parse_flag_int(const std::string& flag, const std::string& text, std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < min || v > max) {
    throw UsageError(fmt::format("{} must be a whole number from {} to {}, got '{}'", flag, min, max, text));
  }
  return v;
}

double parse_flag_double(const std::string& flag, const std::string& text, double min, double max) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v) || v < min || v > max) {
    throw UsageError(fmt::format("{} must be a number from {} to {}, got '{}'", flag, min, max, text));
  }
  return v;
}

std::string format_flag_number(double v) { return fmt::format("{}", v); }

double parse_flag_duration(const std::string& flag, const std::string& text, double min_s, double max_s) {
  double unit = 1;
  std::string number = text;
  if (!text.empty()) {
    switch (text.back()) {
      case 's': unit = 1; number.pop_back(); break;
      case 'm': unit = 60; number.pop_back(); break;
      case 'h': unit = 3600; number.pop_back(); break;
      default: break;
    }
  }
  double v = 0;
  const char* end = number.data() + number.size();
  const auto [ptr, ec] = std::from_chars(number.data(), end, v);
  const double s = v * unit;
  if (number.empty() || ec != std::errc() || ptr != end || !std::isfinite(s) || s < min_s || s > max_s) {
    throw UsageError(fmt::format("{} must be a duration from {} s to {} s (90, 90s, 10m, 1h), got '{}'", flag, min_s,
                                 max_s, text));
  }
  return s;
}

}  // namespace sharebench
