# Gauss–Huard / Gauss–Jordan batched kernels (issue 4): sources and tests.
target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/batched_gh_cpu.cpp)
if(BLOCKRES_HAVE_CUDA)
  # One file per lane-group width class keeps each nvcc run short.
  target_sources(blockres_kernels PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/batched_gh_cuda.cu
    ${CMAKE_CURRENT_LIST_DIR}/batched_gh_cuda_1_8.cu
    ${CMAKE_CURRENT_LIST_DIR}/batched_gh_cuda_9_16.cu
    ${CMAKE_CURRENT_LIST_DIR}/batched_gh_cuda_17_32.cu)
endif()

if(BLOCKRES_BUILD_TESTS)
  blockres_add_test(test_batched_gh_cpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_batched_gh_cpu.cpp
                    LIBS blockres_kernels)
  if(BLOCKRES_HAVE_CUDA)
    blockres_add_test(test_batched_gh_gpu GPU SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_batched_gh_gpu.cpp
                      LIBS blockres_linalg)
  endif()
endif()
