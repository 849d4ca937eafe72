// ProgressLine: the runner's live line on a terminal (progress_line.h).
#include "harness/runner/progress_line.h"

#include <cstdio>

#include <fmt/format.h>

#include "harness/util/terminal.h"

namespace sharebench {

ProgressLine::ProgressLine(std::size_t total, bool enabled)
    : total_(total), enabled_(enabled), t0_(std::chrono::steady_clock::now()) {}

void ProgressLine::cell(std::size_t done, std::string what) {
  done_ = done;
  what_ = std::move(what);
  last_ = {};
  draw("");
}

void ProgressLine::tick(const CellProgress& p) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  // A program under exec has no known total: its steps so far.
  std::string detail = p.steps_total > 0 ? fmt::format("  steps {}/{}", p.steps_done, p.steps_total)
                                         : fmt::format("  steps {}", p.steps_done);
  if (p.quiet_s >= 1.0) detail += fmt::format(", no progress for {:.0f} s (hang at {:.0f} s)", p.quiet_s, p.hang_timeout_s);
  draw(detail);
}

void ProgressLine::clear() const {
  if (enabled_) terminal::erase_line(stderr);
}

void ProgressLine::draw(const std::string& detail) const {
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  std::string left;
  if (done_ > 0) left = fmt::format(", about {:.0f} s left", elapsed / done_ * (total_ - done_));
  terminal::redraw_line(stderr, fmt::format("[{}/{}] {}{}  ({:.0f} s{})", done_, total_, what_, detail, elapsed, left));
}

}  // namespace sharebench
