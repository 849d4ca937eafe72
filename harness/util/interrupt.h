// interrupt: SIGINT, SIGTERM, SIGHUP and SIGQUIT handling for the runner. The handler only sets a flag; the watchdog
// and the runner poll it, tear the cell down, and write the partial results marked interrupted.
#pragma once

namespace sharebench {

void install_interrupt_handlers();
// In a fork child of the runner (a worker): SIGINT, SIGTERM, SIGHUP and SIGQUIT back to their
// default action. The runner's handler only sets a flag that no worker reads, so a worker that was
// sent SIGTERM went on and its cell passed, where under spawn (exec resets handlers) it died.
void restore_default_interrupt_handlers();
bool interrupt_requested();
int interrupt_signal();
// The exit status of an interrupted run: 128 + the signal's number (130 for SIGINT), as a shell
// reports a command the signal ended.
int interrupted_exit_code();

}  // namespace sharebench
