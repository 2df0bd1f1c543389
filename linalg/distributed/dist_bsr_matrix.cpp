#include "linalg/distributed/dist_bsr_matrix.hpp"

#include "kernels/halo/halo.hpp"

#if BLOCKRES_HAVE_CUDA
#include "kernels/cuda_check.hpp"

#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <stdexcept>
#include <string>

namespace blockres::dist {

namespace {

// The map, built on every rank; a defect on any rank throws on all of them (one rank alone throwing would leave the
// others waiting in the halo plan's collective).
IndexMap agreed_map(const Communicator& comm, int bs, std::vector<gindex_t> owned,
                    std::span<const index_t> row_ptr, std::span<const gindex_t> gcol,
                    const std::function<int(gindex_t)>& owner_of)
{
  std::string why;
  std::optional<IndexMap> map;
  try {
    if (bs < 1) throw std::invalid_argument("DistBsrMatrix: block size must be at least 1");
    if (row_ptr.size() != owned.size() + 1 || row_ptr[0] != 0 || std::size_t(row_ptr.back()) != gcol.size())
      throw std::invalid_argument("DistBsrMatrix: row_ptr must have owned + 1 entries, start at 0 and end at the "
                                  "number of columns given");
    for (std::size_t r = 0; r + 1 < row_ptr.size(); ++r)
      for (index_t k = row_ptr[r] + 1; k < row_ptr[r + 1]; ++k)
        if (!(gcol[std::size_t(k) - 1] < gcol[std::size_t(k)]))
          throw std::invalid_argument("DistBsrMatrix: columns not strictly ascending in owned row " + std::to_string(r) +
                                      " (global " + std::to_string(owned[r]) + ")");
    map.emplace(std::move(owned), gcol, owner_of, comm.rank());
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!comm.all(why.empty()))
    throw std::invalid_argument(why.empty() ? "DistBsrMatrix: another rank's rows are inconsistent" : why);
  return std::move(*map);
}

}  // namespace

// Pinned host buffers of the staged device halo (CUDA), freed with the matrix.
struct DistBsrMatrix::Pinned {
  double* send = nullptr;
  double* recv = nullptr;
  Pinned(std::size_t send_doubles, std::size_t recv_doubles)
  {
#if BLOCKRES_HAVE_CUDA
    if (send_doubles) BLOCKRES_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&send), send_doubles * sizeof(double)));
    if (recv_doubles) BLOCKRES_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&recv), recv_doubles * sizeof(double)));
#else
    (void)send_doubles, (void)recv_doubles;
#endif
  }
  ~Pinned()
  {
#if BLOCKRES_HAVE_CUDA
    if (send) cudaFreeHost(send);
    if (recv) cudaFreeHost(recv);
#endif
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
};

DistBsrMatrix::~DistBsrMatrix() = default;

DistBsrMatrix::DistBsrMatrix(ExecPtr exec, CommPtr comm, int bs, std::vector<gindex_t> owned,
                             std::span<const index_t> row_ptr, std::span<const gindex_t> gcol,
                             const std::function<int(gindex_t)>& owner_of)
    : bs_(bs),
      comm_(std::move(comm)),
      map_(agreed_map(*comm_, bs, std::move(owned), row_ptr, gcol, owner_of)),
      plan_(HaloPlan::build(*comm_, map_))
{
  const index_t n = map_.owned();
  nnzb_ = row_ptr.back();
  BsrPattern d, o;
  d.nrows = o.nrows = n;
  d.ncols = n;
  o.ncols = map_.ghosts();
  d.row_ptr.assign(1, 0);
  o.row_ptr.assign(1, 0);
  where_.resize(std::size_t(nnzb_));
  std::vector<std::pair<index_t, index_t>> row_offd;  // (ghost column, pattern position)
  for (index_t r = 0; r < n; ++r) {
    row_offd.clear();
    for (index_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
      const index_t l = map_.local(gcol[k]);
      if (l < n) {  // owned: local ids follow global order, so the row stays sorted
        where_[std::size_t(k)] = {0, index_t(d.col_ind.size())};
        d.col_ind.push_back(l);
      } else {
        row_offd.emplace_back(l - n, k);
      }
    }
    std::sort(row_offd.begin(), row_offd.end());
    for (const auto& [c, k] : row_offd) {
      where_[std::size_t(k)] = {1, index_t(o.col_ind.size())};
      o.col_ind.push_back(c);
    }
    d.row_ptr.push_back(index_t(d.col_ind.size()));
    o.row_ptr.push_back(index_t(o.col_ind.size()));
  }
  diag_.emplace(exec, bs, d);
  if (map_.ghosts() > 0 && !o.col_ind.empty()) offd_.emplace(exec, bs, o);
  ghost_ = Array<double>(exec, size64_t(map_.ghosts()) * bs);
  exchange_ = std::make_unique<HaloExchange>(comm_, plan_, bs);
  if (exec->is_cuda()) {
    send_ids_dev_ = Array<index_t>(exec, std::span<const index_t>(plan_.send_ids));
    send_dev_ = Array<double>(exec, size64_t(plan_.sent()) * bs);
    pinned_ = std::make_unique<Pinned>(std::size_t(plan_.sent()) * std::size_t(bs), std::size_t(map_.ghosts()) * std::size_t(bs));
  }
}

void DistBsrMatrix::set_values(std::span<const double> values)
{
  const std::size_t bb = std::size_t(bs_) * std::size_t(bs_);
  if (values.size() != std::size_t(nnzb_) * bb)
    throw std::invalid_argument("DistBsrMatrix::set_values: " + std::to_string(values.size()) + " values for " +
                                std::to_string(nnzb_) + " blocks of " + std::to_string(bs_) + "x" + std::to_string(bs_));
  std::vector<double> dv(std::size_t(diag_->nnzb()) * bb), ov(offd_ ? std::size_t(offd_->nnzb()) * bb : 0);
  for (std::size_t k = 0; k < where_.size(); ++k) {
    const auto [part, pos] = where_[k];
    std::copy_n(values.data() + k * bb, bb, (part == 0 ? dv.data() : ov.data()) + std::size_t(pos) * bb);
  }
  diag_->values().copy_from_host(dv);
  if (offd_) offd_->values().copy_from_host(ov);
}

void DistBsrMatrix::start_halo(const Array<double>& x) const
{
  if (!pinned_) {  // host memory: the exchange straight from x into the ghosts
    exchange_->start(x.data(), ghost_.data());
    return;
  }
#if BLOCKRES_HAVE_CUDA
  const Executor& e = diag_->exec();
  const auto s = static_cast<cudaStream_t>(e.stream());
  const std::size_t sent = std::size_t(plan_.sent()) * std::size_t(bs_);
  if (sent) {
    kernels::cuda::halo_pack(e.stream(), x.data(), send_ids_dev_.data(), plan_.sent(), bs_, send_dev_.data());
    BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(pinned_->send, send_dev_.data(), sent * sizeof(double), cudaMemcpyDeviceToHost, s));
  }
  // The packed entries on the host; also: the previous exchange's copy out of pinned_->recv is done.
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
  exchange_->start_packed(pinned_->send, pinned_->recv);
#endif
}

void DistBsrMatrix::finish_halo() const
{
  exchange_->finish();
#if BLOCKRES_HAVE_CUDA
  if (pinned_ && map_.ghosts() > 0)
    BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(ghost_.data(), pinned_->recv,
                                        std::size_t(map_.ghosts()) * std::size_t(bs_) * sizeof(double),
                                        cudaMemcpyHostToDevice, static_cast<cudaStream_t>(diag_->exec().stream())));
#endif
}

void DistBsrMatrix::exchange(const Array<double>& x) const
{
  if (x.size() != size64_t(map_.owned()) * bs_)
    throw std::invalid_argument("DistBsrMatrix::exchange: x must hold the owned rows' entries");
  start_halo(x);
  finish_halo();
}

void DistBsrMatrix::apply(double alpha, const Array<double>& x, double beta, Array<double>& y) const
{
  const size64_t n = size64_t(map_.owned()) * bs_;
  if (x.size() != n || y.size() != n)
    throw std::invalid_argument("DistBsrMatrix::apply: x and y must hold the owned rows' " + std::to_string(n) +
                                " entries");
  start_halo(x);
  if (n > 0) diag_->apply(alpha, x, beta, y);  // CUDA: on the GPU while the host waits for the peers
  finish_halo();
  if (offd_) offd_->apply(alpha, ghost_, 1.0, y);
}

}  // namespace blockres::dist
