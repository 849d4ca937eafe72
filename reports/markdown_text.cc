// markdown_text: see the header.
#include "reports/markdown_text.h"

#include <algorithm>

#include <fmt/format.h>

namespace sharebench::markdown {

// Text from outside (a program's output, a results file someone else wrote) as one line of a
// Markdown table cell or list item: no bare pipe, no newline, no raw HTML (a pull-request comment
// would render it). Only what opens markup is escaped: `<` (a tag) and `&` (an entity); a `>`
// inside a line is text to Markdown and stays readable in the raw file ("load 2.90 -> 1.79").
std::string text(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else if (ch == '<') out += "&lt;";
    else if (ch == '&') out += "&amp;";
    else out += ch;
  }
  return out;
}

namespace {
std::size_t longest_backtick_run(const std::string& s) {
  std::size_t longest = 0, run = 0;
  for (char ch : s) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}
}  // namespace

// An inline code span that holds any text: a delimiter longer than any run of backticks inside,
// pipes escaped for tables (GitHub reads \| inside a code span in a table as a pipe).
std::string code(const std::string& s) {
  std::string text;
  for (char ch : s) {
    if (ch == '|') text += "\\|";
    else if (ch == '\n' || ch == '\r') text += ' ';
    else text += ch;
  }
  const std::string ticks(longest_backtick_run(text) + 1, '`');
  const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
  return pad ? ticks + " " + text + " " + ticks : ticks + text + ticks;
}

// A fenced block that holds any text: the fence is longer than any run of backticks inside, so a
// program's output that holds ``` cannot close it and put raw HTML into the report.
std::string fenced(const std::string& s, const char* language) {
  const std::string fence(std::max<std::size_t>(3, longest_backtick_run(s) + 1), '`');
  return fmt::format("{}{}\n{}{}{}\n", fence, language, s, s.empty() || s.back() == '\n' ? "" : "\n", fence);
}

}  // namespace sharebench::markdown
