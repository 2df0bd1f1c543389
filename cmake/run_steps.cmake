# Runs STEP1, STEP2, ... (each a ;-list: a command and its arguments) in order; fails at the first that does not
# exit 0, showing its output. ctest -P script for tests made of several commands (issue 33: a run on one rank count,
# its restart on another, verify of the result).
foreach(i RANGE 1 9)
  if(NOT DEFINED STEP${i})
    break()
  endif()
  execute_process(COMMAND ${STEP${i}} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step ${i} exited with ${rc}: ${STEP${i}}\n${out}\n${err}")
  endif()
  string(REGEX MATCH "verify: [A-Z]+[^\n]*" verdict "${out}")
  message(STATUS "step ${i}: ok ${verdict}")
endforeach()
