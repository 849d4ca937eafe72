// exec_python_files: the Python hooks `sharebench exec` injects into a user's program
// (wings/exec/python/*.py), compiled into the binary by CMakeLists.txt, each with its file name. The
// exec scenario writes every one of them into a cell's private directory, whose path goes first on
// the program's PYTHONPATH: a new hook module is a new file in that folder, and nothing else.
// Each comes with its checked-hash .pyc for the Python the build found (cmake/compile_hook.py),
// which exec writes into that folder's __pycache__: the program's interpreters of that version load
// the hooks without compiling them; any other version compiles them as it would without it.
#pragma once

#include <cstddef>
#include <vector>

namespace sharebench {

struct ExecPythonFile {
  const char* name;               // "sharebench_watch.py"
  const char* source;             // its text
  const unsigned char* bytecode;  // its .pyc for exec_python_cache_tag(), or null
  std::size_t bytecode_size;
};

const std::vector<ExecPythonFile>& exec_python_files();

// The build's Python's cache tag ("cpython-311"), which names the .pyc files; empty when the build
// found no Python.
const char* exec_python_cache_tag();

}  // namespace sharebench
