// markdown_text: text from outside (a program's output, a results file someone else wrote) put into
// Markdown as data, never markup: one line of a table cell or list item, an inline code span, a
// fenced block. Every Markdown writer (report.md, its recommendation section) goes through these.
#pragma once

#include <string>

namespace sharebench::markdown {

// One line of a table cell or list item: no bare pipe, no newline, no raw HTML.
std::string text(const std::string& s);

// An inline code span that holds any text.
std::string code(const std::string& s);

// A fenced block that holds any text.
std::string fenced(const std::string& s, const char* language = "");

}  // namespace sharebench::markdown
