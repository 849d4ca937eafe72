// splitmix64: the one pseudo-random step every part of --chaos draws from (the schedule, the
// phase plan, the seeds), so that the same seed gives the same plan everywhere.
#pragma once

#include <cstdint>

namespace sharebench {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace sharebench
