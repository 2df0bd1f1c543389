// main() for GPU test binaries: exits with 77 (CTest "skipped") when no CUDA device is usable,
// so a machine without a GPU reports these tests as skipped, never as passed.
#include "linalg/executor.hpp"

#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char** argv)
{
  if (!blockres::Executor::built_with_cuda()) {
    std::printf("SKIPPED: blockres was built without CUDA\n");
    return 77;
  }
  if (blockres::Executor::cuda_device_count() == 0) {
    std::printf("SKIPPED: no CUDA device present\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
