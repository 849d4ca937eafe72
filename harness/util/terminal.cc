// Terminal output: carriage return and "erase to end of line" (ECMA-48 EL), written here only.
#include "harness/util/terminal.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace sharebench::terminal {
namespace {
constexpr std::string_view kEraseLine = "\r\x1b[K";
}  // namespace

bool is_interactive(std::FILE* stream) {
  const char* term = std::getenv("TERM");
  return ::isatty(::fileno(stream)) != 0 && !(term != nullptr && std::strcmp(term, "dumb") == 0);
}

void redraw_line(std::FILE* stream, std::string_view text) {
  fmt::print(stream, "{}{}", kEraseLine, text);
  std::fflush(stream);
}

void erase_line(std::FILE* stream) {
  fmt::print(stream, "{}", kEraseLine);
  std::fflush(stream);
}

}  // namespace sharebench::terminal
