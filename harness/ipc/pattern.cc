// fill_pattern and checksum: four independent multiply-xor lanes, so the loop runs at memory
// speed rather than at the latency of one multiply chain.
#include "harness/ipc/pattern.h"

#include <cstring>

namespace sharebench {

namespace {
constexpr std::uint64_t kPrime = 0x100000001b3ULL;
constexpr std::uint64_t kSeedMix = 0x9e3779b97f4a7c15ULL;
constexpr std::uint64_t kPositionMix = 0xd1b54a32d192ed03ULL;

struct Lanes {
  std::uint64_t h[4] = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL, 0x2325cbf29ce48422ULL, 0xe484222325cbf29cULL};
  void mix(std::size_t i, std::uint64_t w) { h[i & 3] = (h[i & 3] ^ w) * kPrime; }
  std::uint64_t finish(std::size_t bytes) const {
    std::uint64_t r = bytes;
    for (std::uint64_t x : h) r = (r ^ x) * kPrime;
    return r;
  }
};
}  // namespace

std::uint64_t fill_pattern(void* data, std::size_t bytes, std::uint64_t seed) {
  auto* words = static_cast<std::uint64_t*>(data);
  const std::size_t n = bytes / sizeof(std::uint64_t);
  const std::uint64_t base = (seed + 1) * kSeedMix;
  Lanes lanes;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t w = base ^ (i * kPositionMix);
    words[i] = w;
    lanes.mix(i, w);
  }
  return lanes.finish(bytes);
}

std::uint64_t checksum(const void* data, std::size_t bytes) {
  const auto* words = static_cast<const std::uint64_t*>(data);
  const std::size_t n = bytes / sizeof(std::uint64_t);
  Lanes lanes;
  for (std::size_t i = 0; i < n; ++i) lanes.mix(i, words[i]);
  return lanes.finish(bytes);
}

}  // namespace sharebench
