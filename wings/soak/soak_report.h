// The soak's own report (`sharebench soak --format console|json`): what was planned and injected,
// what hung, what was killed and what was left behind. Its cells' reports are the ordinary ones.
#pragma once

#include <string>

#include "wings/soak/soak.h"

namespace sharebench {

// The figures as lines for the console, ending with the verdict and the results file.
std::string render_soak_console(const SoakFigures& figures, double wall_s, const std::string& results_path);
// The figures as JSON (soak.json, and stdout under --format json), with a final newline.
std::string render_soak_json(const SoakFigures& figures, const SoakOptions& options, double wall_s);

}  // namespace sharebench
