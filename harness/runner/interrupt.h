// interrupt: SIGINT/SIGTERM handling for the runner. The handler only sets a flag; the watchdog
// and the runner poll it, tear the cell down, and write the partial results marked interrupted.
#pragma once

namespace sharebench {

void install_interrupt_handlers();
bool interrupt_requested();
int interrupt_signal();

}  // namespace sharebench
