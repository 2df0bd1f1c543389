// The random source of the kernels' randomized tests: a fresh seed per run, printed with the name
// of the tests so that a failure can be replayed with BLOCKRES_TEST_SEED=<seed>.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <random>

namespace blockres::test_rng {

// A generator seeded from BLOCKRES_TEST_SEED when set, else from std::random_device; says which.
inline std::mt19937_64 seeded(const char* tests)
{
  unsigned long long seed = std::random_device{}();
  if (const char* s = std::getenv("BLOCKRES_TEST_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::printf("%s test seed %llu (replay with BLOCKRES_TEST_SEED)\n", tests, seed);
  return std::mt19937_64{seed};
}

}  // namespace blockres::test_rng
