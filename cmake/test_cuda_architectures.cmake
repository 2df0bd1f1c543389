# CTest cuda_architectures: the default CUDA architectures of cmake/cuda_architectures.cmake, in script
# mode (no GPU, no nvcc needed): GPU detection through stand-in nvidia-smi programs, the choice for
# each kind of machine, and which source wins (explicit, CUDAARCHS, automatic).
# Usage: cmake -DWORK_DIR=<scratch dir> -P test_cuda_architectures.cmake
cmake_minimum_required(VERSION 3.24)  # the project's policies (IN_LIST, ...)
include(${CMAKE_CURRENT_LIST_DIR}/cuda_architectures.cmake)

if(NOT WORK_DIR)
  message(FATAL_ERROR "test_cuda_architectures.cmake: -DWORK_DIR=... is required")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(failures 0)
function(expect_eq what got want)
  if(NOT "${got}" STREQUAL "${want}")
    message(SEND_ERROR "${what}: got '${got}', want '${want}'")
  else()
    message(STATUS "ok: ${what}")
  endif()
endfunction()
function(expect_match what got regex)
  if(NOT "${got}" MATCHES "${regex}")
    message(SEND_ERROR "${what}: '${got}' does not match '${regex}'")
  else()
    message(STATUS "ok: ${what}")
  endif()
endfunction()

# A stand-in nvidia-smi: prints `out` and exits with `code`.
function(fake_smi var name out code)
  set(path "${WORK_DIR}/${name}")
  file(WRITE "${path}" "#!/bin/sh\nprintf '%s' '${out}'\nexit ${code}\n")
  file(CHMOD "${path}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  set(${var} "${path}" PARENT_SCOPE)
endfunction()

# ---- detection ------------------------------------------------------------------------------------
fake_smi(smi h100 "9.0, NVIDIA H100 80GB HBM3\n" 0)
blockres_query_gpus(caps names why "${smi}")
expect_eq("one H100: capabilities" "${caps}" "90")
expect_eq("one H100: names" "${names}" "NVIDIA H100 80GB HBM3")
expect_eq("one H100: no reason" "${why}" "")

fake_smi(smi two "8.6, NVIDIA RTX A6000\n12.0, NVIDIA RTX PRO 6000 Blackwell\n" 0)
blockres_query_gpus(caps names why "${smi}")
expect_eq("two GPUs: capabilities" "${caps}" "86;120")
expect_eq("two GPUs: names" "${names}" "NVIDIA RTX A6000;NVIDIA RTX PRO 6000 Blackwell")

fake_smi(smi nodriver "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.\n" 9)
blockres_query_gpus(caps names why "${smi}")
expect_eq("driver not answering: no GPU" "${caps}" "")
expect_match("driver not answering: why" "${why}" "^nvidia-smi failed \\(9\\): NVIDIA-SMI has failed")

fake_smi(smi oldfield "Field \"compute_cap\" is not a valid field to query.\n" 2)
blockres_query_gpus(caps names why "${smi}")
expect_eq("old driver without compute_cap: no GPU" "${caps}" "")

fake_smi(smi empty "No devices were found\n" 0)
blockres_query_gpus(caps names why "${smi}")
expect_eq("no device listed: no GPU" "${caps}" "")
expect_eq("no device listed: why" "${why}" "nvidia-smi listed no GPU")

blockres_query_gpus(caps names why "")
expect_eq("nvidia-smi missing: why" "${why}" "nvidia-smi not found")

# ---- the default for each machine ---------------------------------------------------------------------
set(nvcc13 75 80 86 87 88 89 90 100 103 110 120 121)
set(nvcc118 50 52 53 60 61 62 70 72 75 80 86 87 89 90)

blockres_default_cuda_architectures(archs reason NO_GPU_WHY "nvidia-smi not found" SUPPORTED ${nvcc13})
expect_eq("no GPU: portable set" "${archs}" "80-real;86-real;89-real;90")
expect_match("no GPU: reason" "${reason}"
             "^portable: sm_80, sm_86, sm_89, sm_90 and compute_90 PTX for newer GPUs; no GPU at configure time \\(nvidia-smi not found\\)$")

blockres_default_cuda_architectures(archs reason CAPS 90 NAMES "NVIDIA H100 80GB HBM3" SUPPORTED ${nvcc13})
expect_eq("H100: native" "${archs}" "90-real")
expect_match("H100: reason" "${reason}" "^native: the GPU present, NVIDIA H100 80GB HBM3 \\(compute capability 9.0\\)")

blockres_default_cuda_architectures(archs reason CAPS 80 80 NAMES "NVIDIA A100" "NVIDIA A100" SUPPORTED ${nvcc13})
expect_eq("two A100: one architecture" "${archs}" "80-real")

blockres_default_cuda_architectures(archs reason CAPS 89 NAMES "NVIDIA L40S" SUPPORTED ${nvcc118})
expect_eq("L40S: native" "${archs}" "89-real")

blockres_default_cuda_architectures(archs reason CAPS 86 120 NAMES "A6000" "RTX PRO 6000" SUPPORTED ${nvcc118})
expect_eq("a GPU newer than nvcc: PTX of the newest below it" "${archs}" "86-real;90")
expect_match("newer than nvcc: reason" "${reason}" "RTX PRO 6000 \\(compute capability 12.0: newer than this nvcc knows, compute_90 PTX")

blockres_default_cuda_architectures(archs reason CAPS 75 NAMES "Tesla T4" SUPPORTED ${nvcc13})
expect_eq("T4 (sm_75): portable set" "${archs}" "80-real;86-real;89-real;90")
expect_match("T4: reason names the GPU" "${reason}" "the GPU present, Tesla T4 \\(compute capability 7.5\\), is older than sm_80")

blockres_default_cuda_architectures(archs reason CAPS 75 90 NAMES "Tesla T4" "H100" SUPPORTED ${nvcc13})
expect_eq("T4 beside an H100: the H100" "${archs}" "90-real")
expect_match("T4 beside an H100: reason" "${reason}" "ignored Tesla T4")

blockres_default_cuda_architectures(archs reason NO_GPU_WHY "x" SUPPORTED 70 75 80 86)
expect_eq("no GPU, old nvcc: the portable set it supports" "${archs}" "80-real;86")

blockres_default_cuda_architectures(archs reason NO_GPU_WHY "x")
expect_eq("no GPU, nvcc silent: the whole portable set" "${archs}" "80-real;86-real;89-real;90")

# ---- which source decides ------------------------------------------------------------------------
blockres_resolve_cuda_architectures(archs source auto CURRENT "" CURRENT_DEFINED FALSE AUTO_MARKER "" ENV "")
expect_eq("fresh configure: automatic" "${source};${auto}" "auto;TRUE")

blockres_resolve_cuda_architectures(archs source auto CURRENT "80" CURRENT_DEFINED TRUE AUTO_MARKER "" ENV "")
expect_eq("-DCMAKE_CUDA_ARCHITECTURES=80 wins" "${archs};${auto}" "80;FALSE")

blockres_resolve_cuda_architectures(archs source auto CURRENT "86" CURRENT_DEFINED TRUE AUTO_MARKER "90-real" ENV "80")
expect_eq("an explicit value over an automatic one wins over CUDAARCHS too" "${archs};${auto}" "86;FALSE")

blockres_resolve_cuda_architectures(archs source auto CURRENT "90-real" CURRENT_DEFINED TRUE AUTO_MARKER "90-real"
                                    ENV "")
expect_eq("re-configure of an automatic choice: decided again" "${source};${auto}" "auto;TRUE")

blockres_resolve_cuda_architectures(archs source auto CURRENT "" CURRENT_DEFINED FALSE AUTO_MARKER "" ENV "80")
expect_eq("CUDAARCHS=80 (CI)" "${archs};${auto}" "80;TRUE")
expect_match("CUDAARCHS: source" "${source}" "CUDAARCHS")

# ---- explicit values older than the kernels need ---------------------------------------------------
file(WRITE "${WORK_DIR}/check.cmake"
     "cmake_minimum_required(VERSION 3.24)\ninclude(${CMAKE_CURRENT_LIST_DIR}/cuda_architectures.cmake)\nblockres_check_cuda_architectures(\"\${ARCHS}\")\n")
# Each case: the value (',' for ';') and whether it must be refused.
foreach(case "75|1" "70-real,80|1" "80,90|0" "90a-real|0" "native|0")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 a)
  list(GET case 1 want_fail)
  string(REPLACE "," ";" a "${a}")
  execute_process(COMMAND ${CMAKE_COMMAND} "-DARCHS=${a}" -P "${WORK_DIR}/check.cmake"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "[ \t\n]+" " " err "${err}")  # CMake wraps the message's lines
  if(want_fail)
    if(rc EQUAL 0 OR NOT err MATCHES "architecture [0-9]+(-real)? is older than sm_80, the oldest the CUDA kernels compile for")
      message(SEND_ERROR "CMAKE_CUDA_ARCHITECTURES=${a}: want a refusal naming the architecture, got rc ${rc}: ${err}")
    else()
      message(STATUS "ok: ${a} refused")
    endif()
  elseif(NOT rc EQUAL 0)
    message(SEND_ERROR "CMAKE_CUDA_ARCHITECTURES=${a}: refused: ${err}")
  else()
    message(STATUS "ok: ${a} accepted")
  endif()
endforeach()
