// `sharebench soak`: random cells under random faults for a while, every verdict checked; its row of the command registry (app/command_registry.h).
#pragma once

#include "cli/command.h"

namespace sharebench::cli {

Command soak_command();

}  // namespace sharebench::cli
