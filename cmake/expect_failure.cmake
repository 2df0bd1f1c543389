# CTest check for bad input: CMD must exit with exactly CODE (default 1), print a message matching EXPECT, and leave
# no .h5 in OUTDIR.
# Usage: cmake -DCMD=<program;arg;...> -DEXPECT=<CMake regex> -DOUTDIR=<dir> [-DCODE=<n>] [-DMKDIRS=<dir|dir...>]
#        -P expect_failure.cmake
# MKDIRS: directories made (after OUTDIR is cleared) before CMD runs, '|'-separated: what is in a destination's way.
# stdout and stderr are matched together, so the program may report on either.
foreach(var CMD EXPECT OUTDIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "expect_failure.cmake: -D${var}=... is required")
  endif()
endforeach()

if(NOT DEFINED CODE)
  set(CODE 1)
endif()

# A result file left by an earlier run must neither pass nor fail this one.
file(REMOVE_RECURSE "${OUTDIR}")
if(DEFINED MKDIRS AND NOT MKDIRS STREQUAL "")
  string(REPLACE "|" ";" dirs "${MKDIRS}")
  file(MAKE_DIRECTORY ${dirs})
endif()

execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(output "${out}${err}")
list(JOIN CMD " " command_line)

set(problems "")
# rc is a text such as "Segmentation fault" when the program crashed: that fails too.
if(NOT rc STREQUAL "${CODE}")
  string(APPEND problems "\n  exit code: ${rc} (expected ${CODE})")
endif()
if(NOT output MATCHES "${EXPECT}")
  string(APPEND problems "\n  the output does not match: ${EXPECT}")
endif()
if(EXISTS "${OUTDIR}")
  file(GLOB_RECURSE written "${OUTDIR}/*.h5" "${OUTDIR}/*.tmp")
  if(written)
    string(APPEND problems "\n  written despite the bad input: ${written}")
  endif()
endif()

if(problems)
  message(FATAL_ERROR "command: ${command_line}${problems}\noutput:\n${output}")
endif()
message(STATUS "rejected as expected: ${output}")
