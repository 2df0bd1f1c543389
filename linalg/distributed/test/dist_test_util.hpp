// Shared by the MPI tests: a seed that is fresh per run but the same on every rank (rank 0's, printed so a failure
// can be replayed with BLOCKRES_TEST_SEED).
#pragma once

#include "linalg/distributed/communicator.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace blockres::dist::test {

inline std::uint64_t shared_seed(const Communicator& comm, const char* what)
{
  std::uint64_t seed = 0;
  if (const char* s = std::getenv("BLOCKRES_TEST_SEED"))
    seed = std::strtoull(s, nullptr, 10);
  else
    seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const gindex_t mine = static_cast<gindex_t>(seed & 0x7fffffffffffffffull);
  const std::vector<gindex_t> all = comm.allgatherv(std::span<const gindex_t>(&mine, 1));
  if (comm.rank() == 0) std::printf("%s: seed %lld (BLOCKRES_TEST_SEED replays it)\n", what, static_cast<long long>(all[0]));
  return static_cast<std::uint64_t>(all[0]);
}

}  // namespace blockres::dist::test
