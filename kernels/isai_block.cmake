# Block-view ISAI (unit_lower / upper / general on a BSR pattern): sources and tests.
target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/isai_block_cpu.cpp)
if(BLOCKRES_HAVE_CUDA)
  target_sources(blockres_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/isai_block_cuda.cu)
endif()

if(BLOCKRES_BUILD_TESTS)
  blockres_add_test(test_isai_block_cpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_isai_block_cpu.cpp
                    LIBS blockres_kernels)
  if(BLOCKRES_HAVE_CUDA)
    blockres_add_test(test_isai_block_gpu GPU SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/test_isai_block_gpu.cpp
                      LIBS blockres_linalg)
  endif()
endif()
