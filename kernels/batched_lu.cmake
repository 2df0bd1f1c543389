# Batched LU with partial pivoting (issue 4): CPU reference, CUDA kernels, tests.
target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/batched_lu_cpu.cpp)
if(BLOCKRES_HAVE_CUDA)
  # Register kernels (one instance per size up to 32) spread over three files so each compiles quickly.
  target_sources(blockres_kernels PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/batched_lu_cuda.cu
    ${CMAKE_CURRENT_LIST_DIR}/batched_lu_cuda_small_1_16.cu
    ${CMAKE_CURRENT_LIST_DIR}/batched_lu_cuda_small_17_24.cu
    ${CMAKE_CURRENT_LIST_DIR}/batched_lu_cuda_small_25_32.cu
    ${CMAKE_CURRENT_LIST_DIR}/batched_lu_cuda_blocked.cu)
endif()

if(BLOCKRES_BUILD_TESTS)
  blockres_add_test(test_batched_lu_cpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_batched_lu_cpu.cpp
                    LIBS blockres_kernels)
  if(BLOCKRES_HAVE_CUDA)
    blockres_add_test(test_batched_lu_gpu GPU SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_batched_lu_gpu.cpp
                      LIBS blockres_linalg)
  endif()
endif()
