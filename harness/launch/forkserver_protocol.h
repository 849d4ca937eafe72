// The forkserver's wire protocol, shared by its client (forkserver.cc) and its server loop
// (forkserver_server.cc): a request header, the cell as JSON and the arena's fd by SCM_RIGHTS; the
// reply is the worker's pid (or -errno), and later, on the same connection, its wait status.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace sharebench::forkserver_protocol {

inline constexpr std::uint32_t kRequestMagic = 0x53424653;  // "SBFS"
inline constexpr std::uint32_t kMaxCellJson = 1 << 20;

struct RequestHeader {
  std::uint32_t magic;
  std::int32_t rank;
  std::uint32_t json_bytes;
};

// Whole reads and writes, retried on EINTR; false on EOF or error.
bool read_full(int fd, void* buf, std::size_t n);
bool write_full(int fd, const void* buf, std::size_t n);

// The server: accepts requests from the runner only, forks a worker for each, reports each
// worker's exit on its connection; ends (removing its socket and directory) on SIGTERM or when the
// runner is gone.
[[noreturn]] void serve(int listen_fd, pid_t runner, const std::string& socket_path, const std::string& dir);

}  // namespace sharebench::forkserver_protocol
