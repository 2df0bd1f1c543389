# ILU(0) and exact triangular solves (issue 5): sources and tests.
target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ilu_cpu.cpp)
if(BLOCKRES_HAVE_CUDA)
  target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ilu_cuda.cu)
endif()

if(BLOCKRES_BUILD_TESTS)
  blockres_add_test(test_ilu_cpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_ilu_cpu.cpp
                    LIBS blockres_kernels)
  if(BLOCKRES_HAVE_CUDA)
    blockres_add_test(test_ilu_gpu GPU SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_ilu_gpu.cpp
                      LIBS blockres_linalg)
  endif()
endif()
