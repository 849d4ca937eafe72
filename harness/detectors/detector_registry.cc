// DetectorRegistry: the built-in detectors, registered once, in their order (detector.h).
#include "harness/detectors/detector.h"

namespace sharebench {

DetectorRegistry& DetectorRegistry::instance() {
  static DetectorRegistry* registry = [] {
    auto* r = new DetectorRegistry;  // never destroyed: a worker may still read it at exit
    register_builtin_detectors(*r);
    return r;
  }();
  return *registry;
}

void DetectorRegistry::add(std::unique_ptr<Detector> detector) { detectors_.push_back(std::move(detector)); }

const Detector* DetectorRegistry::find(std::string_view id) const {
  for (const auto& d : detectors_) {
    if (d->id().name() == id) return d.get();
  }
  return nullptr;
}

}  // namespace sharebench
