# The CUDA architectures a blockres build compiles for, decided before enable_language(CUDA):
# an explicit choice wins (-DCMAKE_CUDA_ARCHITECTURES=..., or the CUDAARCHS environment variable);
# otherwise the GPU(s) present at configure time (what CMake's `native` means, read from nvidia-smi
# so that a machine whose driver does not answer gets the portable set, not a configure error);
# otherwise a portable set: real code for sm_80, 86, 89 and 90, plus compute_90 PTX that the driver
# JIT-compiles on newer GPUs. Pure functions below are tested in script mode by
# cmake/test_cuda_architectures.cmake (CTest cuda_architectures).

# Real code for each; the last also as PTX (newer GPUs JIT-compile it).
set(BLOCKRES_PORTABLE_CUDA_ARCHITECTURES 80 86 89 90)
# The oldest GPU the kernels run on: warp reductions (__reduce_max_sync) and cp.async need sm_80.
set(BLOCKRES_MIN_CUDA_ARCHITECTURE 80)

# blockres_query_gpus(<caps_var> <names_var> <why_var> <nvidia_smi>): the compute capabilities of
# the GPUs nvidia-smi lists (as CMake architecture numbers: 9.0 -> 90, 12.0 -> 120) and their names;
# both empty when there is no answer, and <why_var> then says why (program missing, driver not
# answering, no GPU listed). An old driver that does not know the compute_cap field counts as no GPU:
# the portable set's PTX still runs there.
function(blockres_query_gpus caps_var names_var why_var smi)
  set(caps "")
  set(names "")
  set(why "")
  if(NOT smi)
    set(why "nvidia-smi not found")
  else()
    execute_process(COMMAND "${smi}" --query-gpu=compute_cap,name --format=csv,noheader
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
    if(NOT rc EQUAL 0)
      string(STRIP "${out}\n${err}" text)
      string(REGEX REPLACE "\n.*" "" text "${text}")
      set(why "nvidia-smi failed (${rc}): ${text}")
    else()
      string(REPLACE "\n" ";" lines "${out}")
      foreach(line IN LISTS lines)
        if(line MATCHES "^[ \t]*([0-9]+)\\.([0-9]+)[ \t]*,[ \t]*(.*[^ \t\r])[ \t\r]*$")
          math(EXPR cap "${CMAKE_MATCH_1} * 10 + ${CMAKE_MATCH_2}")
          list(APPEND caps ${cap})
          list(APPEND names "${CMAKE_MATCH_3}")
        endif()
      endforeach()
      if(NOT caps)
        set(why "nvidia-smi listed no GPU")
      endif()
    endif()
  endif()
  set(${caps_var} "${caps}" PARENT_SCOPE)
  set(${names_var} "${names}" PARENT_SCOPE)
  set(${why_var} "${why}" PARENT_SCOPE)
endfunction()

# blockres_nvcc_architectures(<var> <nvcc>): the virtual architectures nvcc compiles for
# (nvcc --list-gpu-arch: compute_80 ... -> 80 ...), empty when it cannot say (then every one is tried).
function(blockres_nvcc_architectures var nvcc)
  set(archs "")
  if(nvcc)
    execute_process(COMMAND "${nvcc}" --list-gpu-arch RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET TIMEOUT 30)
    if(rc EQUAL 0)
      string(REGEX MATCHALL "compute_[0-9]+" found "${out}")
      foreach(a IN LISTS found)
        string(REPLACE "compute_" "" a "${a}")
        list(APPEND archs ${a})
      endforeach()
    endif()
  endif()
  set(${var} "${archs}" PARENT_SCOPE)
endfunction()

# The newest of `supported` that is <= cap (empty when none).
function(_blockres_newest_at_most var cap supported)
  set(best "")
  foreach(s IN LISTS supported)
    if(s LESS_EQUAL cap AND (best STREQUAL "" OR s GREATER best))
      set(best ${s})
    endif()
  endforeach()
  set(${var} "${best}" PARENT_SCOPE)
endfunction()

# "9.0" for 90, "12.0" for 120.
function(_blockres_capability_text var cap)
  math(EXPR major "${cap} / 10")
  math(EXPR minor "${cap} % 10")
  set(${var} "${major}.${minor}" PARENT_SCOPE)
endfunction()

# blockres_default_cuda_architectures(<archs_var> <reason_var> CAPS <caps> NAMES <names>
#                                     NO_GPU_WHY <why> SUPPORTED <nvcc archs>)
# The default for the GPUs found (blockres_query_gpus) and what nvcc supports (empty: assume all):
#  - each GPU of sm_80 or newer: its real code ("90-real"); one newer than nvcc knows: the PTX of the
#    newest architecture nvcc has below it ("90"), which the driver JIT-compiles;
#  - no such GPU: the portable set (those of it that nvcc supports, PTX of the last).
# <reason_var>: the why, for the configure line.
function(blockres_default_cuda_architectures archs_var reason_var)
  cmake_parse_arguments(A "" "NO_GPU_WHY" "CAPS;NAMES;SUPPORTED" ${ARGN})
  set(archs "")
  set(found "")
  set(too_old "")
  set(i 0)
  list(REMOVE_DUPLICATES A_SUPPORTED)
  foreach(cap IN LISTS A_CAPS)
    list(GET A_NAMES ${i} name)
    math(EXPR i "${i} + 1")
    _blockres_capability_text(cc ${cap})
    if(cap LESS BLOCKRES_MIN_CUDA_ARCHITECTURE)
      list(APPEND too_old "${name} (compute capability ${cc})")
      continue()
    endif()
    set(note "")
    if(NOT A_SUPPORTED OR cap IN_LIST A_SUPPORTED)
      set(arch "${cap}-real")
    else()
      _blockres_newest_at_most(ptx ${cap} "${A_SUPPORTED}")
      set(arch "${ptx}")
      set(note ": newer than this nvcc knows, compute_${ptx} PTX JIT-compiled by the driver")
    endif()
    if(NOT arch IN_LIST archs)
      list(APPEND archs "${arch}")
      list(APPEND found "${name} (compute capability ${cc}${note})")
    endif()
  endforeach()
  string(REPLACE ";" ", " too_old_text "${too_old}")
  if(archs)
    list(REMOVE_DUPLICATES found)
    string(REPLACE ";" ", " found_text "${found}")
    set(reason "native: the GPU present, ${found_text}, from nvidia-smi")
    if(too_old)
      string(APPEND reason "; ignored ${too_old_text}: older than sm_${BLOCKRES_MIN_CUDA_ARCHITECTURE}")
    endif()
  else()
    set(portable "")
    foreach(a IN LISTS BLOCKRES_PORTABLE_CUDA_ARCHITECTURES)
      if(NOT A_SUPPORTED OR a IN_LIST A_SUPPORTED)
        list(APPEND portable ${a})
      endif()
    endforeach()
    if(NOT portable)
      list(JOIN BLOCKRES_PORTABLE_CUDA_ARCHITECTURES ", " wanted)
      message(FATAL_ERROR "blockres: this nvcc compiles for none of ${wanted} (it lists ${A_SUPPORTED}): "
                          "install CUDA 11.8 or newer, or configure with -DBLOCKRES_CUDA=OFF")
    endif()
    list(POP_BACK portable last)
    set(text "")
    foreach(a IN LISTS portable)
      list(APPEND archs "${a}-real")
      list(APPEND text "sm_${a}")
    endforeach()
    list(APPEND archs "${last}")
    list(APPEND text "sm_${last}")
    string(REPLACE ";" ", " text "${text}")
    set(reason "portable: ${text} and compute_${last} PTX for newer GPUs; ")
    if(too_old)
      string(APPEND reason "the GPU present, ${too_old_text}, is older than sm_${BLOCKRES_MIN_CUDA_ARCHITECTURE}, the "
                           "oldest the CUDA kernels run on (run with --backend cpu there)")
    else()
      string(APPEND reason "no GPU at configure time (${A_NO_GPU_WHY})")
    endif()
  endif()
  set(${archs_var} "${archs}" PARENT_SCOPE)
  set(${reason_var} "${reason}" PARENT_SCOPE)
endfunction()

# blockres_check_cuda_architectures(<archs>): a fatal error, one line, when an explicit list names a
# numbered architecture older than the kernels need (native, all and all-major are left to nvcc).
function(blockres_check_cuda_architectures archs)
  foreach(a IN LISTS archs)
    if(a MATCHES "^([0-9]+)" AND CMAKE_MATCH_1 LESS BLOCKRES_MIN_CUDA_ARCHITECTURE)
      message(FATAL_ERROR "blockres: CMAKE_CUDA_ARCHITECTURES=${archs}: architecture ${a} is older than "
                          "sm_${BLOCKRES_MIN_CUDA_ARCHITECTURE}, the oldest the CUDA kernels compile for (warp "
                          "reductions, cp.async); choose ${BLOCKRES_MIN_CUDA_ARCHITECTURE} or newer, or configure "
                          "with -DBLOCKRES_CUDA=OFF")
    endif()
  endforeach()
endfunction()

# blockres_resolve_cuda_architectures(<archs_var> <source_var> <auto_var>
#     CURRENT <cache value or empty> CURRENT_DEFINED <bool> AUTO_MARKER <last automatic choice>
#     ENV <CUDAARCHS>)
# Which source decides: an explicit CMAKE_CUDA_ARCHITECTURES (defined and not the value this file
# chose automatically at the last configure) wins; else a non-empty CUDAARCHS; else "auto" (the
# caller detects). <auto_var>: whether the value is re-decided at the next configure.
function(blockres_resolve_cuda_architectures archs_var source_var auto_var)
  cmake_parse_arguments(A "" "CURRENT;CURRENT_DEFINED;AUTO_MARKER;ENV" "" ${ARGN})
  if(A_CURRENT_DEFINED AND NOT "${A_CURRENT}" STREQUAL "${A_AUTO_MARKER}")
    set(${archs_var} "${A_CURRENT}" PARENT_SCOPE)
    set(${source_var} "explicit: -DCMAKE_CUDA_ARCHITECTURES" PARENT_SCOPE)
    set(${auto_var} FALSE PARENT_SCOPE)
  elseif(NOT "${A_ENV}" STREQUAL "")
    set(${archs_var} "${A_ENV}" PARENT_SCOPE)
    set(${source_var} "explicit: the CUDAARCHS environment variable" PARENT_SCOPE)
    set(${auto_var} TRUE PARENT_SCOPE)
  else()
    set(${archs_var} "" PARENT_SCOPE)
    set(${source_var} "auto" PARENT_SCOPE)
    set(${auto_var} TRUE PARENT_SCOPE)
  endif()
endfunction()

# Sets CMAKE_CUDA_ARCHITECTURES (cache) for this configure and prints one line saying which and why.
# Call before enable_language(CUDA), with CMAKE_CUDA_COMPILER known.
function(blockres_set_cuda_architectures)
  set(defined FALSE)
  if(DEFINED CACHE{CMAKE_CUDA_ARCHITECTURES} OR DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(defined TRUE)
  endif()
  blockres_resolve_cuda_architectures(archs source auto CURRENT "${CMAKE_CUDA_ARCHITECTURES}"
    CURRENT_DEFINED ${defined} AUTO_MARKER "${BLOCKRES_CUDA_ARCHITECTURES_AUTO}" ENV "$ENV{CUDAARCHS}")
  if(source STREQUAL "auto")
    find_program(BLOCKRES_NVIDIA_SMI nvidia-smi)
    mark_as_advanced(BLOCKRES_NVIDIA_SMI)
    blockres_query_gpus(caps names why "${BLOCKRES_NVIDIA_SMI}")
    blockres_nvcc_architectures(supported "${CMAKE_CUDA_COMPILER}")
    blockres_default_cuda_architectures(archs source CAPS ${caps} NAMES ${names} NO_GPU_WHY "${why}"
                                        SUPPORTED ${supported})
  endif()
  blockres_check_cuda_architectures("${archs}")
  if(auto)
    set(CMAKE_CUDA_ARCHITECTURES "${archs}" CACHE STRING "CUDA architectures (default: the GPU present, else 80, 86, 89, 90 + PTX)" FORCE)
    set(BLOCKRES_CUDA_ARCHITECTURES_AUTO "${archs}" CACHE INTERNAL "the last automatic choice of CMAKE_CUDA_ARCHITECTURES")
  else()
    unset(BLOCKRES_CUDA_ARCHITECTURES_AUTO CACHE)
  endif()
  message(STATUS "blockres: CUDA architectures ${archs} (${source})")
endfunction()
