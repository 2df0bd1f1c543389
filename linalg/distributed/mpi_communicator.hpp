// The MPI communicator of all ranks (only in builds with BLOCKRES_HAVE_MPI; the header itself has no MPI).
#pragma once

#include "linalg/distributed/communicator.hpp"

namespace blockres::dist {

// MPI_COMM_WORLD: MPI is initialised (MPI_THREAD_FUNNELED) on the first call, unless the program already did, and
// finalised at exit when this call initialised it. Throws std::runtime_error when the build has no MPI.
CommPtr mpi_world_communicator();

}  // namespace blockres::dist
