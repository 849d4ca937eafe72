// CellConfig: naming of cells, equality and the JSON text workers receive (cell_config_json.h).
#include "harness/config/cell_config.h"
#include "harness/util/bounded_json.h"
#include "harness/config/cell_config_json.h"

#include <ostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/util/enum_words.h"

namespace sharebench {

using nlohmann::json;

namespace {
constexpr EnumWord<StartMethod> kStartMethodWords[] = {{StartMethod::kFork, "fork"},
                                                       {StartMethod::kSpawn, "spawn"},
                                                       {StartMethod::kForkserver, "forkserver"},
                                                       {StartMethod::kThread, "thread"}};
}  // namespace

std::string_view to_string(StartMethod m) { return word_of(kStartMethodWords, m); }
std::ostream& operator<<(std::ostream& out, StartMethod m) { return out << to_string(m); }
std::optional<StartMethod> parse_start_method(std::string_view s) { return value_of_word(kStartMethodWords, s); }

const std::vector<StartMethod>& all_start_methods() {
  static const std::vector<StartMethod> all = [] {
    std::vector<StartMethod> v;
    for (const auto& w : kStartMethodWords) v.push_back(w.value);
    return v;
  }();
  return all;
}

const std::vector<std::string>& python_start_methods() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& w : kStartMethodWords) {
      if (w.value != StartMethod::kThread) v.emplace_back(w.word);
    }
    return v;
  }();
  return names;
}

std::string command_name(const std::vector<std::string>& command) {
  // The first word that is not an interpreter or one of its options: "python3 -u x/hogwild.py" is
  // "hogwild.py", "python3 -m pkg.main" is "pkg.main", "sh -c '...'" is "sh-c".
  auto base = [](const std::string& w) {
    const std::size_t slash = w.rfind('/');
    return slash == std::string::npos ? w : w.substr(slash + 1);
  };
  // A name goes into ids, reports and file names: nothing that a terminal, a Markdown table or a
  // page would read as markup.
  auto plain = [](std::string name) {
    for (char& ch : name) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c == 0x7f || ch == '|' || ch == '`' || ch == '<' || ch == '>' || ch == ' ') ch = '_';
    }
    return name;
  };
  std::string interpreter_word = "python";
  for (std::size_t i = 0; i < command.size(); ++i) {
    const std::string b = base(command[i]);
    const bool last = i + 1 == command.size();
    if (b == "-m" && !last) return plain(command[i + 1]);
    if (b == "-c") return plain(interpreter_word + "-c");
    const bool interpreter = b.rfind("python", 0) == 0 || b == "env" || b == "bash" || b == "sh" || b == "torchrun";
    if (interpreter && b != "env") interpreter_word = b.rfind("python", 0) == 0 ? "python" : b;
    const bool assignment = b.find('=') != std::string::npos;  // env NAME=VALUE ...
    if (!last && (interpreter || assignment || b.rfind('-', 0) == 0)) continue;
    return plain(b);
  }
  return command.empty() ? std::string() : plain(base(command.front()));
}

std::string CellConfig::id() const {
  const std::string what = command.empty() ? variant : command_name(command);
  const std::string how = command.empty() ? std::string(to_string(start)) : variant;
  std::string id = fmt::format("{}/{}@{}:{}", scenario, what, how, procs);
  if (workload.model != "mlp") {  // "+transformer-s", or a TorchScript file's name
    const std::size_t slash = workload.model.rfind('/');
    id += "+" + (slash == std::string::npos ? workload.model : workload.model.substr(slash + 1));
  }
  if (fault.active()) id += "~" + fault.spec();
  return id;
}

bool operator==(const WorkloadOptions& a, const WorkloadOptions& b) { return json(a) == json(b); }
bool operator==(const CellConfig& a, const CellConfig& b) { return json(a) == json(b); }

std::string CellConfig::to_json() const { return json(*this).dump(); }

CellConfig CellConfig::from_json(std::string_view text) {
  try {
    return parse_json_bounded(text).get<CellConfig>();
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("cell config: {}", e.what()));
  }
}

}  // namespace sharebench
