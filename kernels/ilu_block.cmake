# Block ILU(0) on the BSR block pattern and its exact block triangular solves (issue 15): sources and tests.
target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ilu_block_cpu.cpp)
if(BLOCKRES_HAVE_CUDA)
  target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ilu_block_cuda.cu)
endif()

if(BLOCKRES_BUILD_TESTS)
  blockres_add_test(test_ilu_block_cpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_ilu_block_cpu.cpp
                    LIBS blockres_kernels)
  if(BLOCKRES_HAVE_CUDA)
    blockres_add_test(test_ilu_block_gpu GPU SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_ilu_block_gpu.cpp
                      LIBS blockres_linalg)
  endif()
endif()
