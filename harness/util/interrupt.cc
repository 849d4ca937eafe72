// interrupt: async-signal-safe flag set by SIGINT, SIGTERM, SIGHUP (the terminal went away) and
// SIGQUIT: each ends a run the same way, torn down and marked interrupted.
#include "harness/util/interrupt.h"

#include <signal.h>

#include <csignal>
#include <initializer_list>

namespace sharebench {

namespace {
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_interrupt(int sig) { g_signal = sig; }
}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR and the loop re-checks
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);
}

void restore_default_interrupt_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
}

bool interrupt_requested() { return g_signal != 0; }
int interrupt_signal() { return static_cast<int>(g_signal); }
int interrupted_exit_code() { return 128 + (g_signal != 0 ? static_cast<int>(g_signal) : SIGINT); }

}  // namespace sharebench
