// Message contents for the IPC transports and benchmarks: fill_pattern writes a pattern that
// depends on a seed and on every word's position, and returns the checksum of what it wrote in
// the same pass (so the producer pays one pass, not two); checksum() is what a consumer computes
// over what it received. A word changed, lost or moved changes the checksum.
// Sizes are whole 8-byte words (the transports use power-of-two sizes from 4 KiB).
#pragma once

#include <cstddef>
#include <cstdint>

namespace sharebench {

std::uint64_t fill_pattern(void* data, std::size_t bytes, std::uint64_t seed);
std::uint64_t checksum(const void* data, std::size_t bytes);

}  // namespace sharebench
