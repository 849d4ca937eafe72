// CUDA IPC for the ipc scenario's `cuda` variant: a producer's device buffer and an interprocess
// event, shared with a consumer process by handle (cudaIpcGetMemHandle / cudaIpcOpenMemHandle,
// cudaIpcGetEventHandle / cudaIpcOpenEventHandle). The consumer waits on the event before it
// reads, so it never sees a buffer the producer is still writing.
//
// Torch-free: it uses the CUDA runtime only, so it builds against the CUDA toolkit alone and
// against a CUDA LibTorch alike. Without the toolkit at build time (SHAREBENCH_HAVE_CUDA unset)
// every entry point is a stub and cuda_ipc_unavailable() says so; without a device at run time,
// cuda_ipc_unavailable() names the runtime's error. Callers skip the cell with that reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace sharebench {

// A CUDA IPC memory handle and event handle, as they cross a socket (64 bytes each in CUDA).
struct CudaIpcHandles {
  unsigned char memory[64];
  unsigned char event[64];
};

// Why CUDA IPC cannot run on this machine (no toolkit at build time, no usable device), or nullopt.
// Asked once, in a child process that exits at once: the caller (the runner) never initialises
// CUDA, so the fork children it starts later can still use it, and no driver descriptor of its
// own is left open.
std::optional<std::string> cuda_ipc_unavailable();

// Initialises the CUDA runtime in this process (a worker, before its descriptors are counted: the
// driver's eventfd, pipes and device files stay open for the process's lifetime, not a leak).
void initialise_cuda_in_this_process();

// A consumer could not map a producer's memory handle: the exporting process has exited (CUDA
// says "invalid resource handle"), or the handle is not valid in this context.
class CudaIpcOpenFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CudaProducerBuffer {
 public:
  explicit CudaProducerBuffer(std::size_t bytes);
  ~CudaProducerBuffer();
  CudaProducerBuffer(const CudaProducerBuffer&) = delete;
  CudaProducerBuffer& operator=(const CudaProducerBuffer&) = delete;
  // Writes fill_pattern(seed) into the device buffer and records the event; returns the checksum.
  std::uint64_t fill(std::uint64_t seed);
  CudaIpcHandles handles() const;
  std::size_t bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class CudaConsumerView {
 public:
  CudaConsumerView(const CudaIpcHandles& handles, std::size_t bytes);
  ~CudaConsumerView();
  CudaConsumerView(const CudaConsumerView&) = delete;
  CudaConsumerView& operator=(const CudaConsumerView&) = delete;
  // Waits for the producer's event, copies the buffer to the host and checksums it.
  std::uint64_t checksum();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sharebench
