# ISAI of the ILU(0) factors (issue 5): sources and tests.
target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/isai_cpu.cpp ${CMAKE_CURRENT_LIST_DIR}/pattern_power.cpp)
if(BLOCKRES_HAVE_CUDA)
  target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/isai_cuda.cu)
endif()

if(BLOCKRES_BUILD_TESTS)
  blockres_add_test(test_isai_cpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_isai_cpu.cpp
                    LIBS blockres_kernels)
  if(BLOCKRES_HAVE_CUDA)
    blockres_add_test(test_isai_gpu GPU SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_isai_gpu.cpp
                      LIBS blockres_linalg)
  endif()
endif()
