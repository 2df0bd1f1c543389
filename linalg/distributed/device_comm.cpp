#include "linalg/distributed/device_comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <vector>

#if BLOCKRES_HAVE_NCCL
#include "kernels/cuda_check.hpp"
#include "kernels/halo/halo.hpp"

#include <cuda_runtime.h>
#include <nccl.h>
#include <unistd.h>
#endif

namespace blockres::dist {

bool nccl_available()
{
#if BLOCKRES_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

namespace {

struct Entry {
  std::shared_ptr<const DeviceComm> comm;
  std::string why_not;
};

// One entry per communicator, for the life of the process: an NCCL communicator is not destroyed at exit (its
// destruction would race the CUDA runtime's and MPI's own teardown; the process's end frees it).
std::mutex& cache_mutex()
{
  static std::mutex m;
  return m;
}
std::map<const Communicator*, Entry>& cache()
{
  static auto* c = new std::map<const Communicator*, Entry>;
  return *c;
}

#if BLOCKRES_HAVE_NCCL
void nccl_check(ncclResult_t r, const char* what)
{
  if (r != ncclSuccess) throw std::runtime_error(fmt::format("{} failed: {}", what, ncclGetErrorString(r)));
}
#endif

}  // namespace

std::string DeviceComm::why_not(const Communicator& comm)
{
  std::lock_guard lock(cache_mutex());
  const auto it = cache().find(&comm);
  return it == cache().end() ? std::string() : it->second.why_not;
}

std::shared_ptr<const DeviceComm> DeviceComm::of(const CommPtr& comm)
{
  std::lock_guard lock(cache_mutex());
  if (const auto it = cache().find(comm.get()); it != cache().end()) return it->second.comm;
  Entry e;
  if (comm->size() == 1) {
    e.why_not = "one rank";
  } else {
#if BLOCKRES_HAVE_NCCL
    // The environment's choice, agreed (a rank throwing alone would leave the others waiting).
    const char* env = std::getenv("BLOCKRES_HALO");
    const std::string_view v = env ? env : "";
    const bool valid = v.empty() || v == "nccl" || v == "host";
    if (!comm->all(valid))
      throw std::invalid_argument(valid ? "BLOCKRES_HALO: another rank's value is not 'nccl' or 'host'"
                                        : fmt::format("BLOCKRES_HALO='{}': expected 'nccl' or 'host'", v));
    // This rank's GPU: host name and PCI bus id; two ranks on one GPU cannot share an NCCL communicator.
    int device = 0;
    BLOCKRES_CUDA_CHECK(cudaGetDevice(&device));
    char bus[64] = {};
    BLOCKRES_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    const gindex_t id = gindex_t(std::hash<std::string>{}(std::string(host) + "/" + bus) >> 1);
    const std::vector<gindex_t> ids = comm->allgatherv(std::span<const gindex_t>(&id, 1));
    int shared_a = -1, shared_b = -1;
    for (std::size_t a = 0; a < ids.size() && shared_a < 0; ++a)
      for (std::size_t b = a + 1; b < ids.size(); ++b)
        if (ids[a] == ids[b]) {
          shared_a = int(a), shared_b = int(b);
          break;
        }
    if (!comm->all(v != "host")) {
      e.why_not = "BLOCKRES_HALO=host";
    } else if (shared_a >= 0) {
      e.why_not = fmt::format("ranks {} and {} share a GPU (NCCL needs one GPU per rank)", shared_a, shared_b);
    } else {
      // Rank 0's unique id to every rank (128 bytes as 16 64-bit values through the host communicator).
      ncclUniqueId uid{};
      static_assert(sizeof uid % sizeof(gindex_t) == 0);
      std::vector<gindex_t> mine;
      if (comm->rank() == 0) {
        nccl_check(ncclGetUniqueId(&uid), "ncclGetUniqueId");
        mine.resize(sizeof uid / sizeof(gindex_t));
        std::memcpy(mine.data(), &uid, sizeof uid);
      }
      const std::vector<gindex_t> got = comm->allgatherv(std::span<const gindex_t>(mine));
      if (got.size() * sizeof(gindex_t) != sizeof uid) throw std::logic_error("DeviceComm: the NCCL id did not arrive");
      std::memcpy(&uid, got.data(), sizeof uid);
      auto d = std::shared_ptr<DeviceComm>(new DeviceComm());
      ncclComm_t nc = nullptr;
      const ncclResult_t r = ncclCommInitRank(&nc, comm->size(), uid, comm->rank());
      if (!comm->all(r == ncclSuccess))
        throw std::runtime_error(
            (r == ncclSuccess ? std::string("ncclCommInitRank failed on another rank")
                              : fmt::format("ncclCommInitRank failed: {}", ncclGetErrorString(r))) +
            " (BLOCKRES_HALO=host in every rank's environment takes the halos through the host instead)");
      d->nccl_ = nc;
      cudaStream_t s = nullptr;
      BLOCKRES_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      d->stream_ = s;
      cudaEvent_t ev = nullptr;
      BLOCKRES_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
      d->event_ = ev;
      // The collectives' connections now (the first all-gather sets them up), not in the first Krylov iteration.
      double* probe = nullptr;
      BLOCKRES_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&probe), std::size_t(comm->size()) * sizeof(double)));
      BLOCKRES_CUDA_CHECK(cudaMemsetAsync(probe, 0, std::size_t(comm->size()) * sizeof(double), s));
      nccl_check(ncclAllGather(probe + comm->rank(), probe, 1, ncclDouble, nc, s), "ncclAllGather");  // in place
      BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
      BLOCKRES_CUDA_CHECK(cudaFree(probe));
      d->rank_ = comm->rank();
      d->size_ = comm->size();
      e.comm = std::move(d);
    }
#else
    e.why_not = "built without NCCL";
#endif
  }
  cache().emplace(comm.get(), e);
  return e.comm;
}

DeviceComm::~DeviceComm()
{
#if BLOCKRES_HAVE_NCCL
  if (nccl_) ncclCommDestroy(static_cast<ncclComm_t>(nccl_));
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  if (event_) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
  if (scratch_) cudaFree(scratch_);
#endif
}

void DeviceComm::exchange(std::span<const Send> sends, std::span<const Recv> recvs, void* stream) const
{
#if BLOCKRES_HAVE_NCCL
  if (sends.empty() && recvs.empty()) return;
  const auto c = static_cast<ncclComm_t>(nccl_);
  const auto s = static_cast<cudaStream_t>(stream);
  nccl_check(ncclGroupStart(), "ncclGroupStart");
  for (const Recv& r : recvs)
    if (r.count) nccl_check(ncclRecv(r.data, r.count, ncclDouble, r.peer, c, s), "ncclRecv");
  for (const Send& m : sends)
    if (m.count) nccl_check(ncclSend(m.data, m.count, ncclDouble, m.peer, c, s), "ncclSend");
  nccl_check(ncclGroupEnd(), "ncclGroupEnd");
#else
  (void)sends, (void)recvs, (void)stream;
  throw std::logic_error("DeviceComm::exchange: built without NCCL");
#endif
}

void DeviceComm::allgatherv(const double* mine, std::span<const std::size_t> counts, double* all, void* stream) const
{
  if (counts.size() != std::size_t(size_)) throw std::invalid_argument("DeviceComm::allgatherv: one count per rank");
  std::vector<Send> sends;
  std::vector<Recv> recvs;
  std::size_t at = 0, my_at = 0;
  for (int r = 0; r < size_; ++r) {
    const std::size_t n = counts[std::size_t(r)];
    if (r == rank_) {
      my_at = at;
    } else {
      sends.push_back({mine, counts[std::size_t(rank_)], r});
      recvs.push_back({all + at, n, r});
    }
    at += n;
  }
#if BLOCKRES_HAVE_NCCL
  // On the communicator's own stream, as every transfer of it, between the caller's stream's work and its next.
  const auto s = static_cast<cudaStream_t>(stream);
  const auto ds = static_cast<cudaStream_t>(stream_);
  const auto e = static_cast<cudaEvent_t>(event_);
  BLOCKRES_CUDA_CHECK(cudaEventRecord(e, s));
  BLOCKRES_CUDA_CHECK(cudaStreamWaitEvent(ds, e, 0));
  if (const std::size_t n = counts[std::size_t(rank_)]; n && all + my_at != mine)
    BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(all + my_at, mine, n * sizeof(double), cudaMemcpyDeviceToDevice, ds));
  exchange(sends, recvs, ds);
  BLOCKRES_CUDA_CHECK(cudaEventRecord(e, ds));
  BLOCKRES_CUDA_CHECK(cudaStreamWaitEvent(s, e, 0));
#else
  (void)my_at, (void)mine, (void)all, (void)stream;
  throw std::logic_error("DeviceComm::allgatherv: built without NCCL");
#endif
}

void DeviceComm::sum(double* v, int k, void* stream) const
{
  if (k <= 0) return;
#if BLOCKRES_HAVE_NCCL
  const std::size_t need = std::size_t(size_) * std::size_t(k);
  if (need > scratch_doubles_) {  // rare (the first sums, a longer basis): cudaFree waits for the device
    if (scratch_) BLOCKRES_CUDA_CHECK(cudaFree(scratch_));
    scratch_ = nullptr;
    scratch_doubles_ = std::max<std::size_t>(need, std::size_t(size_) * 64);
    BLOCKRES_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&scratch_), scratch_doubles_ * sizeof(double)));
  }
  const auto s = static_cast<cudaStream_t>(stream);
  const auto ds = static_cast<cudaStream_t>(stream_);
  const auto e = static_cast<cudaEvent_t>(event_);
  BLOCKRES_CUDA_CHECK(cudaEventRecord(e, s));
  BLOCKRES_CUDA_CHECK(cudaStreamWaitEvent(ds, e, 0));
  nccl_check(ncclAllGather(v, scratch_, std::size_t(k), ncclDouble, static_cast<ncclComm_t>(nccl_), ds), "ncclAllGather");
  BLOCKRES_CUDA_CHECK(cudaEventRecord(e, ds));
  BLOCKRES_CUDA_CHECK(cudaStreamWaitEvent(s, e, 0));
  kernels::cuda::sum_ranks(s, size_, k, scratch_, v);
#else
  (void)v, (void)stream;
  throw std::logic_error("DeviceComm::sum: built without NCCL");
#endif
}

}  // namespace blockres::dist
