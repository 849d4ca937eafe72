// inherited_state: what a process inherits from whoever started it and that would break a run,
// put right before anything else happens. A calling shell may have closed descriptors 0-2
// (`sharebench ... <&- >&- 2>&-`): the first files opened would take their numbers, and a child's
// "stdout" would be a read-only /dev/null or a results file. It may have ignored SIGCHLD
// (`trap '' CHLD`): the kernel then reaps children itself, waitpid() fails, and every worker looks
// lost. It may have blocked signals (a supervisor's mask): the runner's SIGINT and SIGTERM handlers
// never run and a `kill -TERM` is held until the run ends. Every child the runner starts inherits
// the state put right here.
#pragma once

namespace sharebench {

// Opens /dev/null on whichever of descriptors 0, 1, 2 is closed; unblocks every signal; sets
// SIGCHLD back to its default action. SIGHUP and SIGPIPE are left as inherited (nohup's choice).
void reset_inherited_process_state();

}  // namespace sharebench
