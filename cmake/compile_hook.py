"""compile_hook.py: compiles one of exec's Python hooks (wings/exec/python/*.py) into a checked-hash
.pyc for the build's Python, which the binary embeds beside the source (CMakeLists.txt). exec writes
both into a run's private directory, so the program's interpreters load the hooks without compiling
them (about 13 ms each, measured in docs/exec.md). A checked-hash .pyc is valid for its source's
bytes whatever the file's time, and Python compiles the source itself when the hash differs or its
version's cache tag is another.

    python3 compile_hook.py SOURCE.py OUTPUT.pyc
"""
import py_compile
import sys

py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True,
                   invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
