// Escaping and colours shared by the HTML page's parts (html_report.cc, html_answer.cc).
#include "reports/html_common.h"

#include <cctype>

#include "harness/results/results_json.h"

namespace sharebench {

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// No '<', '>' or '&' at all (they occur only inside strings, where \u003c reads the same to JSON),
// so neither "</script>" nor "<!--<script>" in a crafted name can end the element or put the parser
// in its escaped state, which stopped every chart from drawing.
std::string script_json(const nlohmann::json& j) {
  const std::string s = dump_json(j);
  std::string out;
  for (const char ch : s) {
    if (ch == '<') out += "\\u003c";
    else if (ch == '>') out += "\\u003e";
    else if (ch == '&') out += "\\u0026";
    else out += ch;
  }
  return out;
}

std::string start_colour(StartMethod m) {
  switch (m) {
    case StartMethod::kFork: return "#0969da";
    case StartMethod::kSpawn: return "#cf222e";
    case StartMethod::kForkserver: return "#1a7f37";
    case StartMethod::kThread: return "#8250df";
  }
  return "#6e7781";
}

nlohmann::json chart_spec(const std::string& id, const std::string& title, const std::string& x_title,
                          const std::string& y_title, nlohmann::json datasets, nlohmann::json extra) {
  nlohmann::json c{{"id", id}, {"title", title}, {"kind", "line"}, {"xTitle", x_title}, {"yTitle", y_title},
                   {"zeroY", true}, {"datasets", std::move(datasets)}};
  for (auto& [k, v] : extra.items()) c[k] = v;
  return c;
}

std::string id_part(std::string s) {
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '-';
  }
  return s;
}

}  // namespace sharebench
