# CTest check of BLOCKRES_REQUIRE_GPU: a GPU command that is skipped without the variable must fail
# with it. CMD runs twice: without the variable it must be skipped (exit 77, or output matching SKIP,
# the GPU test's own SKIP_REGULAR_EXPRESSION with '|' for ';'); with BLOCKRES_REQUIRE_GPU=1 it must
# exit with a code other than 0 and 77, say "BLOCKRES_REQUIRE_GPU is set" and match no SKIP pattern.
# Where CMD runs (a usable GPU), there is nothing to check: the script says "not applicable", which
# the test's SKIP_REGULAR_EXPRESSION reports as skipped.
# Usage: cmake -DCMD=<program;arg;...> -DSKIP=<regex> -P expect_require_gpu.cmake
foreach(var CMD SKIP)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "expect_require_gpu.cmake: -D${var}=... is required")
  endif()
endforeach()
list(JOIN CMD " " command_line)

execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=BLOCKRES_REQUIRE_GPU ${CMD}
                RESULT_VARIABLE rc0 OUTPUT_VARIABLE out0 ERROR_VARIABLE err0)
set(output0 "${out0}${err0}")
if(rc0 STREQUAL "0")
  message(STATUS "REQUIRE_GPU check not applicable: the command ran (a usable GPU): ${command_line}")
  return()
endif()
if(NOT rc0 STREQUAL "77" AND NOT output0 MATCHES "${SKIP}")
  message(FATAL_ERROR "command: ${command_line}\nwithout BLOCKRES_REQUIRE_GPU it neither ran nor was skipped "
                      "(exit code ${rc0}):\n${output0}")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -E env BLOCKRES_REQUIRE_GPU=1 ${CMD}
                RESULT_VARIABLE rc1 OUTPUT_VARIABLE out1 ERROR_VARIABLE err1)
set(output "${out1}${err1}")
set(problems "")
if(rc1 STREQUAL "0" OR rc1 STREQUAL "77")
  string(APPEND problems "\n  exit code ${rc1}: passed or skipped instead of failing")
endif()
if(output MATCHES "${SKIP}")
  string(APPEND problems "\n  the output matches the skip pattern ${SKIP}")
endif()
if(NOT output MATCHES "BLOCKRES_REQUIRE_GPU is set")
  string(APPEND problems "\n  the output does not say 'BLOCKRES_REQUIRE_GPU is set'")
endif()
if(problems)
  message(FATAL_ERROR "command (BLOCKRES_REQUIRE_GPU=1): ${command_line}${problems}\noutput:\n${output}")
endif()
message(STATUS "skipped without BLOCKRES_REQUIRE_GPU (exit ${rc0}), failed with it (exit ${rc1}): ${output}")
