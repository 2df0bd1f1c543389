# CPR kernels (issue 16): quasi-IMPES weights, pressure matrix values, restriction, prolongation.
target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cpr_cpu.cpp)
if(BLOCKRES_HAVE_CUDA)
  target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cpr_cuda.cu)
endif()

if(BLOCKRES_BUILD_TESTS)
  if(BLOCKRES_HAVE_CUDA)
    blockres_add_test(test_cpr_gpu GPU SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_cpr_gpu.cpp
                      LIBS blockres_linalg)
  endif()
endif()
