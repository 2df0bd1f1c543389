// main() of the MPI GPU tests (label gpu;mpi): every rank asks gpu_test_start for a usable CUDA device and the ranks
// agree; without one on every rank all exit 77 (CTest "skipped", mpiexec passes the code on), or 1 under
// BLOCKRES_REQUIRE_GPU or a failing device query. Then as mpi_test_main: rank 0 reports, the others print their
// failures, exit 1 when any rank failed. A rank's device: its rank modulo the devices it sees (dist_test_util.hpp).
#include "linalg/distributed/communicator.hpp"
#include "linalg/distributed/test/dist_test_util.hpp"
#include "linalg/executor.hpp"
#include "linalg/test/gpu_test_start.hpp"

#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char** argv)
{
  ::testing::InitGoogleTest(&argc, argv);
  const auto comm = blockres::dist::world_communicator();
  if (!blockres::dist::test::launcher_consistent(*comm)) return 1;
  const auto start = blockres::test::gpu_test_start(
      blockres::Executor::built_with_cuda(), [](std::string& why) { return blockres::Executor::cuda_device_count(&why); },
      blockres::gpu_required());
  const bool every_run = comm->all(start.run);
  const bool none_failed = comm->all(start.run || start.exit_code != 1);
  if (!every_run) {
    if (!start.run) std::printf("rank %d: %s\n", comm->rank(), start.message.c_str());
    return none_failed ? 77 : 1;
  }
  if (comm->rank() != 0) blockres::dist::test::quiet_except_failures(comm->rank());
  const int rc = RUN_ALL_TESTS();
  return comm->all(rc == 0) ? 0 : 1;
}
