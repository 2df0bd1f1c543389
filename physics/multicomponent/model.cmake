# Model multicomponent (nc = 1..64 components, nc x nc blocks): sources of blockres_physics and the tests.
set(dir ${CMAKE_CURRENT_LIST_DIR})
target_sources(blockres_physics PRIVATE ${dir}/multicomponent_model.cpp ${dir}/multicomponent_cpu.cpp
                                        ${dir}/multicomponent_deck.cpp)
if(BLOCKRES_HAVE_CUDA)
  # Pass-2 assembly split by size class: fixed nc in multicomponent_cuda_fixed.cu, the rest here.
  target_sources(blockres_physics PRIVATE ${dir}/multicomponent_cuda.cu ${dir}/multicomponent_cuda_fixed.cu)
endif()
if(BLOCKRES_BUILD_TESTS)
  blockres_add_test(test_multicomponent SOURCES ${dir}/test/test_multicomponent.cpp LIBS blockres_physics)
  blockres_add_test(test_multicomponent_deck SOURCES ${dir}/test/test_multicomponent_deck.cpp LIBS blockres_physics)
  blockres_add_test(test_multicomponent_gpu GPU SOURCES ${dir}/test/test_multicomponent_gpu.cpp LIBS blockres_physics)
endif()
