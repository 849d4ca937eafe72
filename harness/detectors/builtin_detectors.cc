// The harness's detectors, one line each, in the order their checks appear in a repetition:
// a new detector is a file of this folder defining make_<name>_detector(), and a line here.
#include "harness/detectors/detector.h"

namespace sharebench {

// Declares make_<name>_detector() (defined in <name>.cc) and registers what it makes.
#define SHAREBENCH_BUILTIN_DETECTOR(name)               \
  std::unique_ptr<Detector> make_##name##_detector();   \
  registry.add(make_##name##_detector())

void register_builtin_plugins(DetectorRegistry& registry) {
  SHAREBENCH_BUILTIN_DETECTOR(liveness);
  SHAREBENCH_BUILTIN_DETECTOR(sanitizer);
  SHAREBENCH_BUILTIN_DETECTOR(fault_injected);
  SHAREBENCH_BUILTIN_DETECTOR(lock_order);
  SHAREBENCH_BUILTIN_DETECTOR(lock_init);
  SHAREBENCH_BUILTIN_DETECTOR(memory);
  SHAREBENCH_BUILTIN_DETECTOR(model_shared);
  SHAREBENCH_BUILTIN_DETECTOR(no_leaks);
}

#undef SHAREBENCH_BUILTIN_DETECTOR

}  // namespace sharebench
