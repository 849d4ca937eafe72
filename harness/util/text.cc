// UTF-8 validation (RFC 3629's table of well-formed sequences) and escaping for display.
#include "harness/util/text.h"

#include <algorithm>

#include <ctime>
#include <cstring>

#include <fmt/format.h>

namespace sharebench {

void copy_text(char* to, std::size_t size, std::string_view text) {
  if (size == 0) return;
  const std::size_t n = std::min(text.size(), size - 1);
  std::memcpy(to, text.data(), n);
  to[n] = '\0';
}

namespace {
// Length of the well-formed sequence starting at text[i], or 0 when it is not one.
std::size_t sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    if (b0 == 0xe0) lo = 0xa0;  // no overlong forms
    if (b0 == 0xed) hi = 0x9f;  // no surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    if (b0 == 0xf0) lo = 0x90;
    if (b0 == 0xf4) hi = 0x8f;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return n;
}
}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

namespace {
std::string escaped(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_length(text, i);
    const auto b = static_cast<unsigned char>(text[i]);
    const bool kept_space = keep_lines && (b == '\n' || b == '\t');
    if (n == 0 || (n == 1 && (b < 0x20 || b == 0x7f) && !kept_space)) {
      out += fmt::format("\\x{:02x}", b);
      ++i;
    } else if (keep_lines && n == 2 && b == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      out += fmt::format("\\u00{:02x}", static_cast<unsigned char>(text[i + 1]));
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}
}  // namespace

std::string printable(std::string_view text) { return escaped(text, /*keep_lines=*/false); }
std::string printable_lines(std::string_view text) { return escaped(text, /*keep_lines=*/true); }

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

namespace {
// Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}
}  // namespace

std::string closest_name(const std::string& name, const std::vector<std::string>& known) {
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const std::string& k : known) {
    const std::size_t d = edit_distance(name, k);
    if (d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  return best;
}

std::string counted(long long n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

namespace {
// Code points in UTF-8 text: the bytes that do not continue a sequence.
std::size_t width_of(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}
}  // namespace

std::string wrapped(std::string_view text, std::size_t width) {
  constexpr std::size_t npos = std::string_view::npos;
  std::string out;
  for (std::size_t start = 0;;) {
    const std::size_t eol = text.find('\n', start);
    std::string_view rest = text.substr(start, eol == npos ? npos : eol - start);
    const std::size_t first = rest.find_first_not_of(' ');
    const std::string more((first == npos ? 0 : first) + 4, ' ');
    std::string prefix;  // "" for the line's first piece, `more` for each continuation
    for (;;) {
      if (prefix.size() + width_of(rest) <= width) break;
      // The last space at which the piece still fits (past the indent of the first piece).
      const std::size_t from = prefix.empty() && first != npos ? first : 0;
      std::size_t cut = npos;
      for (std::size_t i = rest.find(' ', from); i != npos; i = rest.find(' ', i + 1)) {
        if (prefix.size() + width_of(rest.substr(0, i)) > width) break;
        cut = i;
      }
      if (cut == npos) cut = rest.find(' ', from);  // a word longer than the room: left whole, on a line of its own
      if (cut == npos || cut == 0) break;
      const std::size_t next = rest.find_first_not_of(' ', cut);
      if (next == npos) break;
      out += prefix;
      out += rest.substr(0, cut);
      out += '\n';
      rest = rest.substr(next);
      prefix = more;
    }
    out += prefix;
    out += rest;
    if (eol == npos) break;
    out += '\n';
    start = eol + 1;
  }
  return out;
}

std::string truncated_line(std::string_view text, std::size_t width) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (width_of(line) <= width) return std::string(line);
  std::size_t kept = 0, chars = 0;  // bytes of the first width - 1 characters
  for (; kept < line.size(); ++kept) {
    if ((static_cast<unsigned char>(line[kept]) & 0xC0) != 0x80 && ++chars == width) break;
  }
  return std::string(line.substr(0, kept)) + "…";
}

}  // namespace sharebench
