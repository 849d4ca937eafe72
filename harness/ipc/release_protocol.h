// The producer's side of the release protocol the producer/consumer scenarios share (ipc,
// model-ipc): every consumer sends a release for every buffer it was given; the producer keeps a
// buffer alive and unchanged while any consumer holds it, and takes releases from whichever
// consumer sends first. One function for both, so the protocol's rules (a release for a buffer not
// held is a protocol error; no release within the timeout is a consumer timeout) are written once.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/ipc/unix_socket.h"

namespace sharebench {

// Reads one `Release` from whichever of `from` sends first and counts it against the buffer
// `key_of(release)` of `live` (a map to buffers with a `held` count); when that was the buffer's
// last holder, calls `on_last(iterator)`, which may erase it. `what` names a buffer in errors
// ("buffer", "version").
template <typename Release, typename Map, typename KeyOf, typename OnLast>
void take_release(std::vector<UnixSocket>& from, Map& live, double timeout_s, const char* what, KeyOf key_of,
                  OnLast on_last) {
  const std::optional<std::size_t> i = first_readable(from, timeout_s);
  if (!i) {
    throw IpcError(IpcError::Kind::kTimeout,
                   fmt::format("ConsumerTimeout: no consumer released a {} within {:.1f} s", what, timeout_s));
  }
  Release r;
  from[*i].receive(&r, sizeof(r), timeout_s);
  auto it = live.find(key_of(r));
  if (it == live.end() || it->second.held <= 0) {
    throw std::runtime_error(fmt::format("a consumer released a {} it did not hold", what));
  }
  if (--it->second.held == 0) on_last(it);
}

}  // namespace sharebench
