// chaos_record: what --chaos did, in words (the sites, a worker's last perturbations), and the
// seed each worker's plan is drawn from. Kept apart from the schedule, which runs in the workers.
#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "harness/chaos/chaos_schedule.h"
#include "harness/chaos/splitmix.h"

namespace sharebench {

const char* to_string(ChaosSite site) {
  switch (site) {
    case ChaosSite::kBeforeLock: return "before a lock";
    case ChaosSite::kHoldingLock: return "holding a lock";
    case ChaosSite::kBeforeUnlock: return "before an unlock";
    case ChaosSite::kBeforeBarrier: return "before a barrier";
    case ChaosSite::kAfterBarrier: return "leaving a barrier";
    case ChaosSite::kBeat: return "at a beat";
    case ChaosSite::kPreempted: return "preempted in its own code";
  }
  return "?";
}

std::string describe_recent_chaos(const ChaosTally& tally, std::int64_t start_ns) {
  std::string out;
  const std::int64_t n = std::min<std::int64_t>(tally.recorded, ChaosTally::kRecent);
  for (std::int64_t i = tally.recorded - n; i < tally.recorded; ++i) {
    const ChaosEvent& e = tally.recent[i % ChaosTally::kRecent];
    if (!out.empty()) out += "; ";
    const double at_ms = static_cast<double>(e.at_ns - start_ns) * 1e-6;
    out += e.pause_us == 0 ? fmt::format("t+{:.1f} ms {}: yield", at_ms, to_string(e.site))
                           : fmt::format("t+{:.1f} ms {}: pause {} µs", at_ms, to_string(e.site), e.pause_us);
  }
  return out;
}

std::uint64_t chaos_stream_seed(std::uint64_t chaos_seed, const std::string& cell_id, int repetition, int rank) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the id, then mixed with the numbers
  for (const unsigned char c : cell_id) h = (h ^ c) * 0x100000001b3ULL;
  std::uint64_t s = chaos_seed ^ h;
  splitmix64(s);
  s ^= static_cast<std::uint64_t>(repetition) * 0xd1b54a32d192ed03ULL;
  splitmix64(s);
  s ^= static_cast<std::uint64_t>(rank) * 0x8cb92ba72f3d8dd7ULL;
  return splitmix64(s);
}

}  // namespace sharebench
