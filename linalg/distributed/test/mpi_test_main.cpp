// GoogleTest main of the MPI tests: every rank runs every test; rank 0 prints the usual report, the other ranks
// print their failures only (prefixed with the rank); the exit code is 1 when any rank failed.
#include "linalg/distributed/communicator.hpp"
#include "linalg/distributed/test/dist_test_util.hpp"

#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char** argv)
{
  ::testing::InitGoogleTest(&argc, argv);
  const auto comm = blockres::dist::world_communicator();
  if (!blockres::dist::test::launcher_consistent(*comm)) return 1;
  if (comm->rank() != 0) blockres::dist::test::quiet_except_failures(comm->rank());
  const int rc = RUN_ALL_TESTS();
  return comm->all(rc == 0) ? 0 : 1;
}
