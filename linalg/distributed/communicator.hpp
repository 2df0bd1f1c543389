// The ranks of a run and every global reduction of it (issue 33): the one place where per-rank partial results
// become global ones. Local reductions stay where they are (vector_ops, the models' norm kernels); their partials
// go through a Communicator. MPI-free interface: MPI appears only in mpi_communicator.cpp, so the rest of the code
// builds and runs without it (a serial run, or a build without MPI, uses SerialCommunicator and never starts MPI).
//
// Reductions are reproducible: every rank gathers the partials of all ranks and adds them in rank order, so the
// result is bitwise the same on every rank (control flow can never diverge between ranks) and does not depend on
// MPI's reduction tree; with one rank it is the partial itself, unchanged.
#pragma once

#include "kernels/common.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace blockres::dist {

using gindex_t = std::int64_t;  // a global cell or row id (a product of counts can pass 2^31)

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // In place over v: the sum (ranks' partials added in rank order), the maximum (NaN wins, as in the norms), over
  // all ranks. Every rank passes the same length.
  virtual void sum(std::span<double> v) const = 0;
  virtual void max(std::span<double> v) const = 0;
  virtual long long sum(long long v) const = 0;  // global counts
  virtual int max(int v) const = 0;              // e.g. an interrupt signal seen by one rank
  virtual bool all(bool ok) const = 0;           // every rank's verdict
  double sum(double v) const
  {
    sum(std::span<double>(&v, 1));
    return v;
  }

  // Variable-length blocks of every rank, concatenated in rank order, on every rank (set-up data: halo plans).
  virtual std::vector<gindex_t> allgatherv(std::span<const gindex_t> mine) const = 0;
  virtual std::vector<double> allgatherv(std::span<const double> mine) const = 0;
  // The same onto rank 0 alone (report rows, the restart state): the concatenation there, empty elsewhere.
  virtual std::vector<double> gatherv_root(std::span<const double> mine) const = 0;
  // counts_to[r] values sent to rank r (from `send`, grouped by destination in rank order); returns what every rank
  // sent to this one, grouped by source in rank order. counts_from[r] receives how many came from rank r.
  virtual std::vector<gindex_t> alltoallv(std::span<const gindex_t> send, std::span<const int> counts_to,
                                          std::vector<int>& counts_from) const = 0;

  // Point to point on host memory (halo exchanges). A request completes in wait_all.
  struct Request {
    std::shared_ptr<void> impl;
  };
  virtual Request isend(const void* buf, std::size_t bytes, int peer, int tag) const = 0;
  virtual Request irecv(void* buf, std::size_t bytes, int peer, int tag) const = 0;
  virtual void wait_all(std::span<Request> requests) const = 0;

  // Ends every rank's process (MPI_Abort): an error seen by one rank must not leave the others waiting in a
  // collective.
  [[noreturn]] virtual void abort(int code) const noexcept = 0;
};

// One rank: reductions return their input, no peers.
class SerialCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void sum(std::span<double>) const override {}
  void max(std::span<double>) const override {}
  long long sum(long long v) const override { return v; }
  int max(int v) const override { return v; }
  bool all(bool ok) const override { return ok; }
  std::vector<gindex_t> allgatherv(std::span<const gindex_t> mine) const override { return {mine.begin(), mine.end()}; }
  std::vector<double> allgatherv(std::span<const double> mine) const override { return {mine.begin(), mine.end()}; }
  std::vector<double> gatherv_root(std::span<const double> mine) const override { return {mine.begin(), mine.end()}; }
  std::vector<gindex_t> alltoallv(std::span<const gindex_t> send, std::span<const int> counts_to,
                                  std::vector<int>& counts_from) const override;
  Request isend(const void*, std::size_t, int peer, int) const override;
  Request irecv(void*, std::size_t, int peer, int) const override;
  void wait_all(std::span<Request>) const override {}
  [[noreturn]] void abort(int code) const noexcept override;
};

using CommPtr = std::shared_ptr<const Communicator>;

CommPtr serial_communicator();

// Whether this process was started by an MPI launcher with more than one rank (mpirun / mpiexec of Open MPI,
// MPICH's hydra, PMIx, srun), read from the launcher's environment; no MPI call.
int launcher_ranks();
// This process's rank among those of its node, from the launcher's environment (Open MPI, MPICH, Slurm); -1 when
// none says. One GPU per rank: device local_rank() modulo the node's devices.
int local_rank();

// The communicator of all ranks of this run: MPI_COMM_WORLD (MPI initialised on first use and finalised at exit)
// when the build has MPI and a launcher started this process; else the serial one.
CommPtr world_communicator();

// Whether this build can run on several ranks (BLOCKRES_HAVE_MPI).
bool mpi_available();

}  // namespace blockres::dist
