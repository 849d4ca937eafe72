// memory_probe: smaps_rollup parsing and a worker's track.
#include "harness/proc/memory_probe.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace sharebench {

std::optional<MemorySample> sample_memory(pid_t pid) {
  const std::string path = fmt::format("/proc/{}/smaps_rollup", pid);
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (!f) return std::nullopt;
  MemorySample s;
  double shared_clean = 0, shared_dirty = 0, private_clean = 0, private_dirty = 0;
  bool any = false;
  char line[256];
  while (std::fgets(line, sizeof line, f)) {
    char key[64];
    double kb = 0;
    if (std::sscanf(line, "%63[^:]: %lf kB", key, &kb) != 2) continue;
    any = true;
    const double mb = kb / 1024;
    if (std::strcmp(key, "Rss") == 0) s.rss_mb = mb;
    else if (std::strcmp(key, "Pss") == 0) s.pss_mb = mb;
    else if (std::strcmp(key, "Shared_Clean") == 0) shared_clean = mb;
    else if (std::strcmp(key, "Shared_Dirty") == 0) shared_dirty = mb;
    else if (std::strcmp(key, "Private_Clean") == 0) private_clean = mb;
    else if (std::strcmp(key, "Private_Dirty") == 0) private_dirty = mb;
  }
  std::fclose(f);
  if (!any) return std::nullopt;
  s.uss_mb = private_clean + private_dirty;
  s.shared_mb = shared_clean + shared_dirty;
  return s;
}

void MemoryTrack::add(const MemorySample& s, double step, double time_s, bool running) {
  samples.push_back(s);
  last = s;
  peak.rss_mb = std::max(peak.rss_mb, s.rss_mb);
  peak.pss_mb = std::max(peak.pss_mb, s.pss_mb);
  peak.uss_mb = std::max(peak.uss_mb, s.uss_mb);
  peak.shared_mb = std::max(peak.shared_mb, s.shared_mb);
  if (running && !at_start) at_start = s;
  if (running) while_running.push_back(s);
  uss_series.push_back(SeriesPoint{step, time_s, s.uss_mb});
}

std::optional<double> MemoryTrack::sustained_growth_mb(double end_mb, double* from, double* to) const {
  if (while_running.size() < 4) return std::nullopt;
  const MemorySample& quarter = while_running[while_running.size() / 4];
  // The later of the last reading while it worked and its own reading as work() returned: memory
  // a worker held until its last step and freed on the way out still grew while it worked.
  const double end = std::max(end_mb, while_running.back().uss_mb);
  if (from) *from = quarter.uss_mb;
  if (to) *to = end;
  return end - quarter.uss_mb;
}

}  // namespace sharebench
