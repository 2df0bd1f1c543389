// The serial communicator, the launcher's rank count, and the choice of the world communicator.
#include "linalg/distributed/communicator.hpp"

#include "linalg/distributed/mpi_communicator.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace blockres::dist {

std::vector<gindex_t> SerialCommunicator::alltoallv(std::span<const gindex_t> send, std::span<const int> counts_to,
                                                    std::vector<int>& counts_from) const
{
  if (counts_to.size() != 1 || counts_to[0] != static_cast<int>(send.size()))
    throw std::invalid_argument("SerialCommunicator::alltoallv: one rank, counts_to must be {send.size()}");
  counts_from.assign(1, counts_to[0]);
  return {send.begin(), send.end()};
}

Communicator::Request SerialCommunicator::isend(const void*, std::size_t, int peer, int) const
{
  throw std::invalid_argument("SerialCommunicator::isend: no rank " + std::to_string(peer) + " in a serial run");
}

Communicator::Request SerialCommunicator::irecv(void*, std::size_t, int peer, int) const
{
  throw std::invalid_argument("SerialCommunicator::irecv: no rank " + std::to_string(peer) + " in a serial run");
}

void SerialCommunicator::abort(int code) const noexcept
{
  std::fflush(nullptr);
  std::_Exit(code);
}

CommPtr serial_communicator()
{
  static const CommPtr c = std::make_shared<SerialCommunicator>();
  return c;
}

int launcher_ranks()
{
  // Open MPI's mpirun, PMIx launchers, MPICH's hydra (PMI), Slurm's srun (the job step's tasks).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    if (const char* v = std::getenv(name)) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && n >= 1 && n <= (1L << 24)) return static_cast<int>(n);
    }
  }
  return 0;
}

int local_rank()
{
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK", "SLURM_LOCALID"}) {
    if (const char* v = std::getenv(name)) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && n >= 0 && n < (1L << 24)) return static_cast<int>(n);
    }
  }
  return -1;
}

bool mpi_available()
{
#if defined(BLOCKRES_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

#if !defined(BLOCKRES_HAVE_MPI)
CommPtr mpi_world_communicator()
{
  throw std::runtime_error("this blockres was built without MPI (BLOCKRES_MPI=OFF or no MPI found): install "
                           "libopenmpi-dev and rebuild to run on several ranks");
}
#endif

CommPtr world_communicator()
{
#if defined(BLOCKRES_HAVE_MPI)
  if (launcher_ranks() >= 1) return mpi_world_communicator();
#endif
  return serial_communicator();
}

}  // namespace blockres::dist
