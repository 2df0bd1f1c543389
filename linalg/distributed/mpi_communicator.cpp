// Communicator over MPI_COMM_WORLD (built only with BLOCKRES_HAVE_MPI). Host buffers only: the MPI on the GPU
// machines is not CUDA-aware, so device data goes through NCCL or pinned host staging (issue 33, later increments).
#include "linalg/distributed/mpi_communicator.hpp"

#include <mpi.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

namespace blockres::dist {
namespace {

void check(int rc, const char* what)
{
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw std::runtime_error(std::string(what) + ": " + std::string(msg, static_cast<std::size_t>(len)));
}

int count_of(std::size_t n, const char* what)
{
  if (n > static_cast<std::size_t>(INT_MAX))
    throw std::length_error(std::string(what) + ": " + std::to_string(n) + " elements in one message (MPI counts are int)");
  return static_cast<int>(n);
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator()
  {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // Partials of every rank (v.size() each), rank-major.
  std::vector<double> gather_all(std::span<const double> v) const
  {
    std::vector<double> all(v.size() * static_cast<std::size_t>(size_));
    const int n = count_of(v.size(), "Communicator reduction");
    check(MPI_Allgather(v.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, MPI_COMM_WORLD), "MPI_Allgather");
    return all;
  }
  void sum(std::span<double> v) const override
  {
    if (size_ == 1 || v.empty()) return;
    const std::vector<double> all = gather_all(v);
    for (std::size_t i = 0; i < v.size(); ++i) {
      double s = all[i];  // rank 0's partial itself: one rank's sum is its partial, bit for bit
      for (int r = 1; r < size_; ++r) s += all[static_cast<std::size_t>(r) * v.size() + i];
      v[i] = s;
    }
  }
  void max(std::span<double> v) const override
  {
    if (size_ == 1 || v.empty()) return;
    const std::vector<double> all = gather_all(v);
    for (std::size_t i = 0; i < v.size(); ++i) {
      double m = all[i];
      for (int r = 1; r < size_; ++r) {
        const double x = all[static_cast<std::size_t>(r) * v.size() + i];
        if (!std::isnan(m) && (std::isnan(x) || x > m)) m = x;
      }
      v[i] = m;
    }
  }
  long long sum(long long v) const override
  {
    long long s = 0;
    check(MPI_Allreduce(&v, &s, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    return s;
  }
  int max(int v) const override
  {
    int m = 0;
    check(MPI_Allreduce(&v, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return m;
  }
  bool all(bool ok) const override
  {
    int mine = ok ? 1 : 0, every = 0;
    check(MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
    return every == 1;
  }

  template <class T>
  std::vector<T> gatherv(std::span<const T> mine, MPI_Datatype type) const
  {
    int n = count_of(mine.size(), "Communicator::allgatherv");
    std::vector<int> counts(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    long long total = 0;
    for (int r = 0; r < size_; ++r) {
      displs[static_cast<std::size_t>(r)] = count_of(static_cast<std::size_t>(total), "Communicator::allgatherv");
      total += counts[static_cast<std::size_t>(r)];
    }
    std::vector<T> all(static_cast<std::size_t>(total));
    check(MPI_Allgatherv(mine.data(), n, type, all.data(), counts.data(), displs.data(), type, MPI_COMM_WORLD),
          "MPI_Allgatherv");
    return all;
  }
  std::vector<gindex_t> allgatherv(std::span<const gindex_t> mine) const override
  {
    return gatherv<gindex_t>(mine, MPI_INT64_T);
  }
  std::vector<double> allgatherv(std::span<const double> mine) const override { return gatherv<double>(mine, MPI_DOUBLE); }
  std::vector<double> gatherv_root(std::span<const double> mine) const override
  {
    const int n = count_of(mine.size(), "Communicator::gatherv_root");
    std::vector<int> counts(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
    check(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
    long long total = 0;
    if (rank_ == 0)
      for (int r = 0; r < size_; ++r) {
        displs[static_cast<std::size_t>(r)] = count_of(static_cast<std::size_t>(total), "Communicator::gatherv_root");
        total += counts[static_cast<std::size_t>(r)];
      }
    std::vector<double> all(static_cast<std::size_t>(total));
    check(MPI_Gatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
                      MPI_COMM_WORLD),
          "MPI_Gatherv");
    return all;
  }

  std::vector<gindex_t> alltoallv(std::span<const gindex_t> send, std::span<const int> counts_to,
                                  std::vector<int>& counts_from) const override
  {
    if (counts_to.size() != static_cast<std::size_t>(size_))
      throw std::invalid_argument("Communicator::alltoallv: one count per rank");
    counts_from.assign(static_cast<std::size_t>(size_), 0);
    check(MPI_Alltoall(counts_to.data(), 1, MPI_INT, counts_from.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall");
    std::vector<int> sdispl(static_cast<std::size_t>(size_)), rdispl(static_cast<std::size_t>(size_));
    long long st = 0, rt = 0;
    for (int r = 0; r < size_; ++r) {
      sdispl[static_cast<std::size_t>(r)] = count_of(static_cast<std::size_t>(st), "Communicator::alltoallv");
      rdispl[static_cast<std::size_t>(r)] = count_of(static_cast<std::size_t>(rt), "Communicator::alltoallv");
      st += counts_to[static_cast<std::size_t>(r)];
      rt += counts_from[static_cast<std::size_t>(r)];
    }
    if (st != static_cast<long long>(send.size()))
      throw std::invalid_argument("Communicator::alltoallv: the counts do not add up to the values sent");
    std::vector<gindex_t> recv(static_cast<std::size_t>(rt));
    check(MPI_Alltoallv(send.data(), counts_to.data(), sdispl.data(), MPI_INT64_T, recv.data(), counts_from.data(),
                        rdispl.data(), MPI_INT64_T, MPI_COMM_WORLD),
          "MPI_Alltoallv");
    return recv;
  }

  Request isend(const void* buf, std::size_t bytes, int peer, int tag) const override
  {
    auto req = std::make_shared<MPI_Request>(MPI_REQUEST_NULL);
    check(MPI_Isend(buf, count_of(bytes, "Communicator::isend"), MPI_BYTE, peer, tag, MPI_COMM_WORLD, req.get()),
          "MPI_Isend");
    return {req};
  }
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) const override
  {
    auto req = std::make_shared<MPI_Request>(MPI_REQUEST_NULL);
    check(MPI_Irecv(buf, count_of(bytes, "Communicator::irecv"), MPI_BYTE, peer, tag, MPI_COMM_WORLD, req.get()),
          "MPI_Irecv");
    return {req};
  }
  void wait_all(std::span<Request> requests) const override
  {
    std::vector<MPI_Request> r;
    r.reserve(requests.size());
    for (const Request& q : requests)
      if (q.impl) r.push_back(*static_cast<MPI_Request*>(q.impl.get()));
    check(MPI_Waitall(static_cast<int>(r.size()), r.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    for (Request& q : requests) q.impl.reset();
  }

  void abort(int code) const noexcept override { MPI_Abort(MPI_COMM_WORLD, code); std::_Exit(code); }

 private:
  int rank_ = 0, size_ = 1;
};

void finalize_at_exit()
{
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

CommPtr mpi_world_communicator()
{
  static std::once_flag once;
  static CommPtr world;
  std::call_once(once, [] {
    int initialized = 0;
    check(MPI_Initialized(&initialized), "MPI_Initialized");
    if (!initialized) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      std::atexit(finalize_at_exit);
    }
    world = std::make_shared<MpiCommunicator>();
  });
  return world;
}

}  // namespace blockres::dist
