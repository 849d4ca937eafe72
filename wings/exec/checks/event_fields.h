// event_fields: reading the JSON lines of sharebench_watch.py's events the way every exec check
// does: a field of the expected type or a default (a file another process wrote is data, and a field
// missing or of another type is never an exception), the events of a kind, and the words the
// checks' messages share (an exit status, the line that started a child). GroupedFindings says once
// a finding that differs only in the process it happened in.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace sharebench::exec_checks {

std::string text_of(const nlohmann::json& j, const char* key, const std::string& otherwise = "");
double number_of(const nlohmann::json& j, const char* key, double otherwise = 0);
int int_of(const nlohmann::json& j, const char* key, int otherwise = 0);
bool has_number(const nlohmann::json& j, const char* key);
// The array at `key`, or an empty one.
const nlohmann::json& array_of(const nlohmann::json& j, const char* key);
std::vector<const nlohmann::json*> events_of(const std::vector<nlohmann::json>& events, const char* kind);
// The last event of `kind` from process `pid`, or nullptr.
const nlohmann::json* last_event_of(const std::vector<nlohmann::json>& events, const char* kind, int pid);
std::string last_line(const std::string& text);
std::string signal_word(int sig);
// "exited 1", "killed by SIGKILL" from a multiprocessing exit code (negative: the signal).
std::string exit_words(int code);
// Where a child was started: the line of its start(), or of the fork that made it; "?" if unknown.
std::string child_started_at(const std::vector<nlohmann::json>& events, int child);
// "state['step'], state['exp_avg']"
std::string key_list(const std::vector<std::string>& keys);

// Findings that differ only in the process they happened in, said once with every pid: a template
// holds "{pids}" where the processes go.
class GroupedFindings {
 public:
  void add(const std::string& text_with_pids, int pid) {
    auto& pids = by_text_[text_with_pids];
    if (pids.empty()) order_.push_back(text_with_pids);
    pids.push_back(pid);
  }
  bool empty() const { return order_.empty(); }
  std::size_t size() const { return order_.size(); }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const std::string& text : order_) {
      const std::vector<int>& pids = by_text_.at(text);
      const std::string who = fmt::format("{} {}", pids.size() == 1 ? "pid" : "pids", fmt::join(pids, ", "));
      std::string line = text;
      for (std::size_t at; (at = line.find("{pids}")) != std::string::npos;) line.replace(at, 6, who);
      out.push_back(line);
    }
    return out;
  }

 private:
  std::map<std::string, std::vector<int>> by_text_;
  std::vector<std::string> order_;
};

}  // namespace sharebench::exec_checks
