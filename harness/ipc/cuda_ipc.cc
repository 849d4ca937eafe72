// CUDA IPC over the CUDA runtime API; stubs when the toolkit was not found at build time.
#include "harness/ipc/cuda_ipc.h"

#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "harness/ipc/pattern.h"
#include "harness/util/child_result.h"

#if SHAREBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sharebench {

#if SHAREBENCH_HAVE_CUDA
namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}
}  // namespace

namespace {
// The question asked in this process: it initialises the CUDA driver here.
std::string ask_for_a_device() {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess) return fmt::format("no usable CUDA device: {}", cudaGetErrorString(e));
  if (devices == 0) return "no CUDA device on this machine";
  return "";
}

// Asked in a child that exits at once, so that this process (the runner) never initialises CUDA:
// a process that has cannot fork children that use CUDA ("initialization error"), and the
// driver's descriptors, open for the process's lifetime, would read as the runner's leak.
std::string ask_in_a_child() {
  try {
    return compute_in_child(ask_for_a_device, 30);
  } catch (const std::exception& e) {
    return fmt::format("the CUDA driver's probe process failed: {}", e.what());
  }
}
}  // namespace

std::optional<std::string> cuda_ipc_unavailable() {
  static const std::string answer = ask_in_a_child();  // asked once per process
  if (answer.empty()) return std::nullopt;
  return answer;
}

void initialise_cuda_in_this_process() { check(cudaFree(nullptr), "cudaFree(0) (initialising the CUDA runtime)"); }

struct CudaProducerBuffer::Impl {
  void* device = nullptr;
  cudaEvent_t event = nullptr;
  cudaStream_t stream = nullptr;
  std::size_t bytes = 0;
  std::vector<unsigned char> host;
};

CudaProducerBuffer::CudaProducerBuffer(std::size_t bytes) : impl_(std::make_unique<Impl>()) {
  impl_->bytes = bytes;
  impl_->host.resize(bytes);
  check(cudaMalloc(&impl_->device, bytes), "cudaMalloc");
  check(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreateWithFlags(&impl_->event, cudaEventInterprocess | cudaEventDisableTiming), "cudaEventCreate");
}

CudaProducerBuffer::~CudaProducerBuffer() {
  if (impl_->event) cudaEventDestroy(impl_->event);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
  if (impl_->device) cudaFree(impl_->device);
}

std::uint64_t CudaProducerBuffer::fill(std::uint64_t seed) {
  const std::uint64_t sum = fill_pattern(impl_->host.data(), impl_->bytes, seed);
  check(cudaMemcpyAsync(impl_->device, impl_->host.data(), impl_->bytes, cudaMemcpyHostToDevice, impl_->stream),
        "cudaMemcpyAsync");
  check(cudaEventRecord(impl_->event, impl_->stream), "cudaEventRecord");
  return sum;
}

CudaIpcHandles CudaProducerBuffer::handles() const {
  CudaIpcHandles h{};
  cudaIpcMemHandle_t m;
  cudaIpcEventHandle_t e;
  check(cudaIpcGetMemHandle(&m, impl_->device), "cudaIpcGetMemHandle");
  check(cudaIpcGetEventHandle(&e, impl_->event), "cudaIpcGetEventHandle");
  static_assert(sizeof(m) == sizeof(h.memory) && sizeof(e) == sizeof(h.event));
  std::memcpy(h.memory, &m, sizeof(m));
  std::memcpy(h.event, &e, sizeof(e));
  return h;
}

std::size_t CudaProducerBuffer::bytes() const { return impl_->bytes; }

struct CudaConsumerView::Impl {
  void* device = nullptr;
  cudaEvent_t event = nullptr;
  std::size_t bytes = 0;
};

CudaConsumerView::CudaConsumerView(const CudaIpcHandles& handles, std::size_t bytes) : impl_(std::make_unique<Impl>()) {
  impl_->bytes = bytes;
  cudaIpcMemHandle_t m;
  cudaIpcEventHandle_t e;
  std::memcpy(&m, handles.memory, sizeof(m));
  std::memcpy(&e, handles.event, sizeof(e));
  const cudaError_t opened = cudaIpcOpenMemHandle(&impl_->device, m, cudaIpcMemLazyEnablePeerAccess);
  if (opened != cudaSuccess) {
    impl_->device = nullptr;
    throw CudaIpcOpenFailed(fmt::format("cudaIpcOpenMemHandle: {}", cudaGetErrorString(opened)));
  }
  const cudaError_t ev = cudaIpcOpenEventHandle(&impl_->event, e);
  if (ev != cudaSuccess) {
    cudaIpcCloseMemHandle(impl_->device);
    check(ev, "cudaIpcOpenEventHandle");
  }
}

CudaConsumerView::~CudaConsumerView() {
  if (impl_->event) cudaEventDestroy(impl_->event);
  if (impl_->device) cudaIpcCloseMemHandle(impl_->device);
}

std::uint64_t CudaConsumerView::checksum() {
  check(cudaEventSynchronize(impl_->event), "cudaEventSynchronize");
  std::vector<unsigned char> host(impl_->bytes);
  check(cudaMemcpy(host.data(), impl_->device, impl_->bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return sharebench::checksum(host.data(), host.size());
}

#else  // built without the CUDA toolkit

namespace {
constexpr const char* kNoToolkit = "built without the CUDA toolkit (CUDAToolkit was not found at configure time)";
}
std::optional<std::string> cuda_ipc_unavailable() { return std::string(kNoToolkit); }
void initialise_cuda_in_this_process() { throw std::runtime_error(kNoToolkit); }
struct CudaProducerBuffer::Impl {};
CudaProducerBuffer::CudaProducerBuffer(std::size_t) { throw std::runtime_error(kNoToolkit); }
CudaProducerBuffer::~CudaProducerBuffer() = default;
std::uint64_t CudaProducerBuffer::fill(std::uint64_t) { throw std::runtime_error(kNoToolkit); }
CudaIpcHandles CudaProducerBuffer::handles() const { throw std::runtime_error(kNoToolkit); }
std::size_t CudaProducerBuffer::bytes() const { return 0; }
struct CudaConsumerView::Impl {};
CudaConsumerView::CudaConsumerView(const CudaIpcHandles&, std::size_t) { throw std::runtime_error(kNoToolkit); }
CudaConsumerView::~CudaConsumerView() = default;
std::uint64_t CudaConsumerView::checksum() { throw std::runtime_error(kNoToolkit); }

#endif

}  // namespace sharebench
