// `sharebench exec [options] -- COMMAND [ARGS...]`: a user's own program under supervision; its row of the command registry (app/command_registry.h).
#pragma once

#include "cli/command.h"

namespace sharebench::cli {

Command exec_command();

}  // namespace sharebench::cli
