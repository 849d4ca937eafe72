// bounded_json: parse JSON that arrives from outside (a results file, a baseline, a line a user's
// program printed) with its nesting bounded. nlohmann's parser itself is iterative, but copying or
// converting a value recurses once per level: a 100 000-level array deep inside a results file
// crashed `report`, `compare`, `merge` and `repro` by stack overflow (SIGSEGV). Refused here, at
// parse time, before anything copies it.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace sharebench {

// Deeper than any file this project writes (results.json nests about 8 levels), far shallower than
// what overflows a thread's stack.
inline constexpr int kMaxJsonDepth = 128;

class JsonTooDeep : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// nlohmann::json::parse with every value at most `max_depth` levels deep; throws JsonTooDeep
// beyond that, nlohmann's parse_error on malformed text.
template <typename Input>
nlohmann::json parse_json_bounded(Input&& input, int max_depth = kMaxJsonDepth) {
  return nlohmann::json::parse(std::forward<Input>(input),
                               [max_depth](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
                                 if (depth > max_depth) {
                                   throw JsonTooDeep("JSON nested more than " + std::to_string(max_depth) +
                                                     " levels deep: refused");
                                 }
                                 return true;
                               });
}

}  // namespace sharebench
