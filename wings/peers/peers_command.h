// `sharebench peers`: each strategy beside the plain torch.multiprocessing program a user would write; its row of the command registry (app/command_registry.h).
#pragma once

#include "cli/command.h"

namespace sharebench::cli {

Command peers_command();

}  // namespace sharebench::cli
