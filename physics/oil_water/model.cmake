# Model oil_water (two phases, 2x2 blocks): sources of blockres_physics; its tests are in physics/test.
set(dir ${CMAKE_CURRENT_LIST_DIR})
target_sources(blockres_physics PRIVATE ${dir}/oil_water_model.cpp ${dir}/oil_water_cpu.cpp ${dir}/oil_water_deck.cpp)
if(BLOCKRES_HAVE_CUDA)
  target_sources(blockres_physics PRIVATE ${dir}/oil_water_cuda.cu)
endif()
