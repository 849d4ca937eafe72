// The built-in kinds of fault, one line each, in the order `soak` draws them: a new kind is a file
// of nemeses/ defining make_<name>_nemesis(), and a line here.
#include "harness/faults/nemesis.h"

namespace sharebench {

// Declares make_<name>_nemesis() (defined in nemeses/<name>.cc) and registers what it makes.
#define SHAREBENCH_BUILTIN_NEMESIS(name)              \
  std::unique_ptr<Nemesis> make_##name##_nemesis();   \
  registry.add(make_##name##_nemesis())

void register_builtin_plugins(NemesisRegistry& registry) {
  SHAREBENCH_BUILTIN_NEMESIS(kill);
  SHAREBENCH_BUILTIN_NEMESIS(kill_holding_lock);
  SHAREBENCH_BUILTIN_NEMESIS(stall);
}

#undef SHAREBENCH_BUILTIN_NEMESIS

}  // namespace sharebench
