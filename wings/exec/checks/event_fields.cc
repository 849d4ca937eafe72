// event_fields: the events' field readers every exec check shares (event_fields.h).
#include "wings/exec/checks/event_fields.h"

#include <cstring>

namespace sharebench::exec_checks {

using nlohmann::json;

std::string text_of(const json& j, const char* key, const std::string& otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : otherwise;
}
double number_of(const json& j, const char* key, double otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : otherwise;
}
int int_of(const json& j, const char* key, int otherwise) {
  return static_cast<int>(number_of(j, key, otherwise));
}
bool has_number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number();
}
const json& array_of(const json& j, const char* key) {
  static const json empty = json::array();
  const auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

std::vector<const json*> events_of(const std::vector<json>& events, const char* kind) {
  std::vector<const json*> out;
  for (const json& e : events) {
    if (text_of(e, "event") == kind) out.push_back(&e);
  }
  return out;
}

const json* last_event_of(const std::vector<json>& events, const char* kind, int pid) {
  const json* found = nullptr;
  for (const json& e : events) {
    if (text_of(e, "event") == kind && int_of(e, "pid") == pid) found = &e;
  }
  return found;
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

std::string signal_word(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

std::string exit_words(int code) { return code >= 0 ? fmt::format("exited {}", code) : fmt::format("killed by {}", signal_word(-code)); }

std::string child_started_at(const std::vector<json>& events, int child) {
  for (const json& e : events) {
    if (text_of(e, "event") == "handoff" && int_of(e, "child") == child) return text_of(e, "where", "?");
  }
  for (const json& e : events) {  // a forked child without a Process (os.fork): the line that forked
    if (text_of(e, "event") == "start" && int_of(e, "pid") == child && e.contains("fork") && e["fork"].is_object()) {
      return text_of(e["fork"], "where", "?");
    }
  }
  return "?";
}

std::string key_list(const std::vector<std::string>& keys) {
  std::vector<std::string> quoted;
  for (const std::string& k : keys) quoted.push_back(fmt::format("state['{}']", k));
  return fmt::format("{}", fmt::join(quoted, ", "));
}

}  // namespace sharebench::exec_checks
