# embed_text.cmake: turns a text file into a C++ source that defines it as a string, for
# inlining a JavaScript library into the self-contained HTML report.
#   cmake -DINPUT=file -DOUTPUT=file.cc -DSYMBOL=name -P embed_text.cmake
# The text is split into raw-string chunks (compilers limit one literal's length).
file(READ "${INPUT}" content)
string(LENGTH "${content}" length)
set(chunk 8000)
set(body "")
set(offset 0)
while(offset LESS length)
  string(SUBSTRING "${content}" ${offset} ${chunk} piece)
  string(APPEND body "  R\"sbembed(${piece})sbembed\"\n")
  math(EXPR offset "${offset} + ${chunk}")
endwhile()
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT} by cmake/embed_text.cmake. Do not edit.\n"
  "extern const char* const ${SYMBOL};\n"
  "const char* const ${SYMBOL} =\n${body};\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
