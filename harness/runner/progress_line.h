// ProgressLine: on a terminal, one line on stderr that redraws itself while a run goes on: cells
// done of all, the cell running, its steps so far and, when it stops moving, the hang countdown.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "harness/runner/runner.h"

namespace sharebench {

class ProgressLine {
 public:
  ProgressLine(std::size_t total, bool enabled);
  void cell(std::size_t done, std::string what);  // a repetition begins
  void tick(const CellProgress& p);              // at most five redraws a second
  void clear() const;

 private:
  void draw(const std::string& detail) const;
  std::size_t total_, done_ = 0;
  bool enabled_;
  std::string what_;
  std::chrono::steady_clock::time_point t0_, last_{};
};

}  // namespace sharebench
