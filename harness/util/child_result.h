// child_result: compute something in a short-lived fork child and bring its answer back as bytes.
// For work whose side effects must not stay in the calling process: asking the CUDA driver whether
// a device is there (it initialises CUDA, after which the caller's fork children cannot use it), or
// training the serial reference (in a CUDA build of LibTorch a backward pass starts autograd's
// device threads, after which no fork child may use autograd). The child dies with the caller.
#pragma once

#include <functional>
#include <string>

namespace sharebench {

// Runs `work` in a fork child and returns the bytes it returned. Throws std::runtime_error with
// the child's exception message when `work` threw, or saying so when the child died, or did not
// answer within `timeout_s` (it is killed then). The caller's other threads are not copied: `work`
// must not wait on anything they hold.
std::string compute_in_child(const std::function<std::string()>& work, double timeout_s);

}  // namespace sharebench
