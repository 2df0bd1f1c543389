// The device query's reading and the GPU-test start rule, on the CPU with injected results:
// a failing cudaGetDeviceCount is an error, not "no device"; BLOCKRES_REQUIRE_GPU turns the
// skip of a GPU test (and the skip texts of GPU runs) into a failure.
#include "linalg/executor.hpp"
#include "linalg/test/gpu_test_start.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>
#include <string>

using namespace blockres;

TEST(DeviceQuery, SuccessGivesTheCount)
{
  std::string why = "untouched";
  EXPECT_EQ(usable_cuda_devices(cuda_status::success, 3, "cudaSuccess", "no error", &why), 3);
  EXPECT_EQ(why, "untouched");
  EXPECT_EQ(usable_cuda_devices(cuda_status::success, 0, "cudaSuccess", "no error", &why), 0);
  EXPECT_NE(why, "untouched");
}

TEST(DeviceQuery, NoDeviceAndNoDriverAreZeroDevicesWithTheReason)
{
  std::string why;
  EXPECT_EQ(usable_cuda_devices(100, 0, "cudaErrorNoDevice", "no CUDA-capable device is detected", &why), 0);
  EXPECT_NE(why.find("cudaErrorNoDevice"), std::string::npos) << why;
  // What the runtime says on a machine without the NVIDIA driver (checked on this project's
  // build machine): `--backend auto` must still run on the CPU there.
  EXPECT_EQ(usable_cuda_devices(35, -1, "cudaErrorInsufficientDriver",
                                "CUDA driver version is insufficient for CUDA runtime version", &why),
            0);
  EXPECT_NE(why.find("insufficient"), std::string::npos) << why;
}

TEST(DeviceQuery, AnyOtherFailureIsAnErrorNamingIt)
{
  // cudaErrorInitializationError (3), cudaErrorDevicesUnavailable (46), cudaErrorStubLibrary (34),
  // cudaErrorSystemDriverMismatch (803): a GPU machine that is broken, not one without a GPU.
  const struct {
    int code;
    const char *name, *text;
  } cases[] = {{3, "cudaErrorInitializationError", "initialization error"},
               {46, "cudaErrorDevicesUnavailable", "CUDA-capable device(s) is/are busy or unavailable"},
               {34, "cudaErrorStubLibrary", "CUDA driver is a stub library"},
               {803, "cudaErrorSystemDriverMismatch", "system has unsupported display driver / cuda driver combination"}};
  for (const auto& c : cases) {
    try {
      usable_cuda_devices(c.code, 0, c.name, c.text);
      ADD_FAILURE() << c.name << " was taken for a count";
    } catch (const std::runtime_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("cudaGetDeviceCount"), std::string::npos) << m;
      EXPECT_NE(m.find(c.name), std::string::npos) << m;
      EXPECT_NE(m.find(c.text), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
    }
  }
}

TEST(RequireGpu, TheVariableIsSetByAnyValueButEmptyOrZero)
{
  EXPECT_FALSE(gpu_required_by(nullptr));
  EXPECT_FALSE(gpu_required_by(""));
  EXPECT_FALSE(gpu_required_by("0"));
  EXPECT_TRUE(gpu_required_by("1"));
  EXPECT_TRUE(gpu_required_by("yes"));
}

TEST(RequireGpu, GpuTestStartSkipsOrFails)
{
  const auto none = [](std::string& why) { return why = "no device here", 0; };
  const auto two = [](std::string&) { return 2; };
  const auto broken = [](std::string&) -> int {
    return usable_cuda_devices(3, 0, "cudaErrorInitializationError", "initialization error");
  };

  auto s = test::gpu_test_start(true, two, false);
  EXPECT_TRUE(s.run);
  s = test::gpu_test_start(true, two, true);
  EXPECT_TRUE(s.run);

  s = test::gpu_test_start(true, none, false);  // a machine without a GPU: skipped
  EXPECT_FALSE(s.run);
  EXPECT_EQ(s.exit_code, 77);
  EXPECT_NE(s.message.find("no device here"), std::string::npos) << s.message;
  s = test::gpu_test_start(false, none, false);
  EXPECT_FALSE(s.run);
  EXPECT_EQ(s.exit_code, 77);

  s = test::gpu_test_start(true, none, true);  // a GPU machine whose GPU is gone: failed
  EXPECT_FALSE(s.run);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_NE(s.message.find("BLOCKRES_REQUIRE_GPU"), std::string::npos) << s.message;
  s = test::gpu_test_start(false, none, true);
  EXPECT_FALSE(s.run);
  EXPECT_EQ(s.exit_code, 1);

  s = test::gpu_test_start(true, broken, false);  // a failing query fails, with or without the variable
  EXPECT_FALSE(s.run);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_NE(s.message.find("cudaErrorInitializationError"), std::string::npos) << s.message;
}

TEST(RequireGpu, MissingGpuMessagesEscapeTheSkipPatternsOnlyWhenRequired)
{
  // The SKIP_REGULAR_EXPRESSION patterns of the GPU runs in verification/CMakeLists.txt.
  const std::regex skip("no CUDA device is available|built without CUDA|needs a CUDA device|needs the CUDA backend");
  const struct {
    const char *what, *usual;
    MissingGpu why;
  } cases[] = {{"--backend cuda", "--backend cuda: no CUDA device is available (cudaErrorNoDevice: ...)", MissingGpu::no_device},
               {"--backend cuda", "--backend cuda: this blockres was built without CUDA", MissingGpu::no_cuda_build},
               {"bench bsrmv", "bench bsrmv needs a CUDA device (no device)", MissingGpu::no_device},
               {"bench isai", "bench isai needs the CUDA backend, and this blockres was built without CUDA",
                MissingGpu::no_cuda_build}};
  for (const auto& c : cases) {
    const std::string usual = missing_gpu_message(c.what, c.usual, c.why, false);
    EXPECT_EQ(usual, c.usual);
    EXPECT_TRUE(std::regex_search(usual, skip)) << usual;
    const std::string required = missing_gpu_message(c.what, c.usual, c.why, true);
    EXPECT_FALSE(std::regex_search(required, skip)) << required;
    EXPECT_EQ(required.rfind(c.what, 0), 0u) << required;
    EXPECT_NE(required.find("BLOCKRES_REQUIRE_GPU is set"), std::string::npos) << required;
  }
}
