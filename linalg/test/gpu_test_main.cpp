// main() for GPU test binaries: exits with 77 (CTest "skipped") when no CUDA device is usable, so a
// machine without a GPU reports these tests as skipped, never as passed; with BLOCKRES_REQUIRE_GPU
// set (GPU machines), or when the device query fails, it fails instead (gpu_test_start.hpp).
#include "linalg/executor.hpp"
#include "linalg/test/gpu_test_start.hpp"

#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char** argv)
{
  const auto start = blockres::test::gpu_test_start(
      blockres::Executor::built_with_cuda(), [](std::string& why) { return blockres::Executor::cuda_device_count(&why); },
      blockres::gpu_required());
  if (!start.run) {
    std::printf("%s\n", start.message.c_str());
    return start.exit_code;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
