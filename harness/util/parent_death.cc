// die_with_parent: PR_SET_PDEATHSIG, then the check for a parent that died before it took effect.
#include "harness/util/parent_death.h"

#include <sys/prctl.h>
#include <unistd.h>

namespace sharebench {

void die_with_parent(pid_t expected_parent, int signal, int exit_code) {
  ::prctl(PR_SET_PDEATHSIG, signal);
  if (::getppid() != expected_parent) ::_exit(exit_code);
}

}  // namespace sharebench
