// What a GPU test binary does before its tests (linalg/test/gpu_test_main.cpp): run them on a usable
// CUDA device; without one, exit 77 (CTest "skipped", SKIP_RETURN_CODE) with a line saying why, or
// exit 1 when BLOCKRES_REQUIRE_GPU asks for a GPU (linalg/executor.hpp); a failing device query is
// a failure too (exit 1), never "no device".
#pragma once

#include "linalg/executor.hpp"

#include <exception>
#include <functional>
#include <string>

namespace blockres::test {

struct GpuTestStart {
  bool run = false;
  int exit_code = 0;    // when !run: 77 skipped, 1 failed
  std::string message;  // when !run: one line for the test log
};

// count_devices: the number of usable devices, the reason for none in its argument (it may throw, as
// Executor::cuda_device_count does when the query fails); require_gpu: gpu_required().
inline GpuTestStart gpu_test_start(bool built_with_cuda, const std::function<int(std::string&)>& count_devices,
                                   bool require_gpu)
{
  std::string why;
  if (!built_with_cuda) {
    why = "blockres was built without CUDA";
  } else {
    try {
      if (count_devices(why) > 0) return {true, 0, {}};
    } catch (const std::exception& e) {
      return {false, 1, std::string("FAILED: the CUDA device query failed: ") + e.what()};
    }
  }
  if (require_gpu) return {false, 1, "FAILED: BLOCKRES_REQUIRE_GPU is set, and no GPU is usable: " + why};
  return {false, 77, "SKIPPED: " + why};
}

}  // namespace blockres::test
