// exec_python_files: the Python hooks `sharebench exec` injects into a user's program
// (wings/exec/python/*.py), compiled into the binary by CMakeLists.txt, each with its file name. The
// exec scenario writes every one of them into a cell's private directory, whose path goes first on
// the program's PYTHONPATH: a new hook module is a new file in that folder, and nothing else.
#pragma once

#include <vector>

namespace sharebench {

struct ExecPythonFile {
  const char* name;    // "sharebench_watch.py"
  const char* source;  // its text
};

const std::vector<ExecPythonFile>& exec_python_files();

}  // namespace sharebench
