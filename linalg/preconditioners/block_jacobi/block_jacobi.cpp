// Block-Jacobi on the batched dense kernels (natural, scalar or agglomerated blocks).
#include "linalg/preconditioners/block_jacobi/block_jacobi.hpp"

#include "kernels/batched/batched_gh.hpp"
#include "kernels/batched/batched_lu.hpp"
#include "kernels/batched/block_diag.hpp"
#include "kernels/blas1/blas1.hpp"
#include "linalg/vector_ops.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace blockres {

int max_block_rows(BlockFactorization f)
{
  return f == BlockFactorization::lu || f == BlockFactorization::automatic ? 512 : kernels::batched_gh_max_size;
}

BlockJacobiPreconditioner::BlockJacobiPreconditioner(ExecPtr exec, BlockJacobiOptions opt)
    : exec_(std::move(exec)), opt_(opt), fact_(opt.factorization)  // "automatic" until the first setup
{
  if (opt_.max_block_size < 0 || opt_.max_block_size > max_block_rows(opt_.factorization))
    throw std::invalid_argument(fmt::format("block-Jacobi: max_block_size {} is not in 0..{} for {}",
                                            opt_.max_block_size, max_block_rows(opt_.factorization),
                                            to_string(opt_.factorization)));
  if (opt_.storage == StoragePrecision::fp32 && opt_.factorization != BlockFactorization::gauss_jordan &&
      opt_.factorization != BlockFactorization::automatic)
    throw std::invalid_argument(fmt::format("block-Jacobi: fp32 storage needs explicit inverses (gauss_jordan), not {}",
                                            to_string(opt_.factorization)));
}

std::string BlockJacobiPreconditioner::name() const
{
  return fmt::format("block_jacobi({}, {}{})", to_string(fact_),
                     mode_ == Mode::scalar    ? std::string("scalar")
                     : mode_ == Mode::natural ? std::string("natural blocks")
                                              : fmt::format("blocks up to {}", opt_.max_block_size),
                     opt_.storage == StoragePrecision::fp32 ? ", fp32 storage" : "");
}

std::vector<index_t> BlockJacobiPreconditioner::block_offsets() const
{
  if (mode_ == Mode::agglomerated) return row_off_.to_host();
  const int n = mode_ == Mode::scalar ? 1 : bs_;
  std::vector<index_t> off(static_cast<std::size_t>(layout_.count) + 1);
  for (index_t b = 0; b <= layout_.count; ++b) off[b] = b * n;
  return off;
}

void BlockJacobiPreconditioner::symbolic(const BsrMatrix& A)
{
  const int bs = A.block_size();
  const index_t nrows = A.nrows();
  const int largest = opt_.max_block_size == 1 ? 1 : std::max(bs, opt_.max_block_size);
  fact_ = opt_.factorization != BlockFactorization::automatic ? opt_.factorization
          : largest <= kernels::batched_gh_max_size           ? BlockFactorization::gauss_jordan
                                                              : BlockFactorization::lu;
  if (opt_.max_block_size != 1 && bs > max_block_rows(opt_.factorization))
    throw std::invalid_argument(fmt::format("block-Jacobi: block size {} is larger than {} allows ({}); use lu", bs,
                                            to_string(opt_.factorization), max_block_rows(opt_.factorization)));
  if (opt_.storage == StoragePrecision::fp32 && fact_ != BlockFactorization::gauss_jordan)
    throw std::invalid_argument(fmt::format(
        "block-Jacobi: storage = \"fp32\" keeps Gauss-Jordan inverses, which take blocks of at most {} rows; this "
        "matrix's Jacobi blocks have up to {} rows (use storage = \"fp64\")",
        kernels::batched_gh_max_size, largest));
  const size64_t bb = size64_t(bs) * bs;
  mode_ = opt_.max_block_size == 1 ? Mode::scalar : opt_.max_block_size <= bs ? Mode::natural : Mode::agglomerated;
  std::vector<index_t> src, row_off;
  std::vector<size64_t> dst_off, mat_off;
  std::vector<int> ld;
  if (mode_ == Mode::scalar) {  // uniform layout of 1x1 blocks: the diagonal entries
    layout_ = {index_t(size64_t(nrows) * bs), nullptr, nullptr, 1, 1};
    factors_ = Array<double>(exec_, size64_t(nrows) * bs);
  } else if (mode_ == Mode::natural) {  // uniform layout: block r is A_rr
    layout_ = {nrows, nullptr, nullptr, bs, bs};
    src = A.diag_pos().to_host();
    dst_off.resize(nrows);
    ld.assign(nrows, bs);
    for (index_t r = 0; r < nrows; ++r) dst_off[r] = r * bb;
    factors_ = Array<double>(exec_, nrows * bb);
  } else {
    const auto rp = A.row_ptr().to_host();
    const auto ci = A.col_ind().to_host();
    const index_t per_block = opt_.max_block_size / bs;  // block rows per Jacobi block, >= 2
    row_off.push_back(0);
    mat_off.push_back(0);
    int largest = 0;
    for (index_t g0 = 0; g0 < nrows;) {
      index_t g1 = g0 + 1;
      while (g1 < nrows && g1 - g0 < per_block &&
             std::any_of(ci.begin() + rp[g1], ci.begin() + rp[g1 + 1], [&](index_t c) { return c >= g0 && c < g1; }))
        ++g1;
      const int n = (g1 - g0) * bs;
      largest = std::max(largest, n);
      for (index_t r = g0; r < g1; ++r)
        for (index_t k = rp[r]; k < rp[r + 1]; ++k)
          if (ci[k] >= g0 && ci[k] < g1) {
            src.push_back(k);
            dst_off.push_back(mat_off.back() + size64_t(r - g0) * bs * n + size64_t(ci[k] - g0) * bs);
            ld.push_back(n);
          }
      row_off.push_back(g1 * bs);
      mat_off.push_back(mat_off.back() + size64_t(n) * n);
      g0 = g1;
    }
    row_off_ = Array<index_t>(exec_, std::span<const index_t>(row_off));
    mat_off_ = Array<size64_t>(exec_, std::span<const size64_t>(mat_off));
    layout_ = {index_t(row_off.size() - 1), row_off_.data(), mat_off_.data(), 0, largest};
    if (exec_->is_cuda()) {
      // Issue 31 item 3: the kernels launch one size class at a time on its own blocks (a 4-row block does
      // not take a 32-lane slot); the CPU loops over the blocks and needs no classes.
      std::vector<index_t> order;
      size_index_ = std::make_unique<kernels::BatchSizeIndex>(kernels::sort_by_size(layout_.count, row_off.data(), order));
      size_order_ = Array<index_t>(exec_, std::span<const index_t>(order));
      size_index_->order = size_order_.data();
      layout_.by_size = size_index_.get();
    }
    factors_ = Array<double>(exec_, mat_off.back());
  }
  factors32_ = opt_.storage == StoragePrecision::fp32 ? Array<float>(exec_, factors_.size()) : Array<float>();
  src_ = Array<index_t>(exec_, std::span<const index_t>(src));
  dst_off_ = Array<size64_t>(exec_, std::span<const size64_t>(dst_off));
  ld_ = Array<int>(exec_, std::span<const int>(ld));
  piv_ = Array<index_t>(exec_, size64_t(nrows) * bs);
  info_ = Array<int>(exec_, std::max<index_t>(layout_.count, 1));
  counter_ = Array<index_t>(exec_, 1);
  pattern_key_ = A.pattern_id();
  nrows_ = nrows;
  nnzb_ = A.nnzb();
  bs_ = bs;
}

SetupStatus BlockJacobiPreconditioner::setup(const BsrMatrix& A)
{
  if (A.diag_pos().empty())
    throw std::invalid_argument("block-Jacobi needs a square matrix with every diagonal block in the pattern");
  if (pattern_key_ != A.pattern_id() || nrows_ != A.nrows() || nnzb_ != A.nnzb() || bs_ != A.block_size())
    symbolic(A);
  if (layout_.count == 0) return {};
  const auto n_src = static_cast<index_t>(src_.size());
  const kernels::GhStorage storage = fact_ == BlockFactorization::gauss_huard_t
                                         ? kernels::GhStorage::transposed
                                         : kernels::GhStorage::standard;
  index_t failed = 0;
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    const auto s = exec_->stream();
    if (mode_ == Mode::scalar) {
      kernels::cuda::extract_diagonal(s, nrows_, bs_, A.diag_pos().data(), A.values().data(), factors_.data());
    } else {
      if (mode_ == Mode::agglomerated) fill(factors_, 0.0);
      kernels::cuda::scatter_blocks(s, n_src, bs_, src_.data(), dst_off_.data(), ld_.data(), A.values().data(),
                                    factors_.data());
    }
    switch (fact_) {
      case BlockFactorization::gauss_jordan:
        kernels::cuda::gauss_jordan_invert(s, layout_, factors_.data(), info_.data());
        break;
      case BlockFactorization::gauss_huard:
      case BlockFactorization::gauss_huard_t:
        kernels::cuda::gauss_huard_factor(s, layout_, factors_.data(), piv_.data(), info_.data(), storage);
        break;
      case BlockFactorization::automatic:  // resolved by symbolic(): never reached
      case BlockFactorization::lu: kernels::cuda::lu_factor(s, layout_, factors_.data(), piv_.data(), info_.data()); break;
    }
    failed = kernels::cuda::count_nonzero(s, layout_.count, info_.data(), counter_.data());
#endif
  } else {
    if (mode_ == Mode::scalar) {
      kernels::cpu::extract_diagonal(nrows_, bs_, A.diag_pos().data(), A.values().data(), factors_.data());
    } else {
      if (mode_ == Mode::agglomerated) fill(factors_, 0.0);
      kernels::cpu::scatter_blocks(n_src, bs_, src_.data(), dst_off_.data(), ld_.data(), A.values().data(),
                                   factors_.data());
    }
    switch (fact_) {
      case BlockFactorization::gauss_jordan: kernels::cpu::gauss_jordan_invert(layout_, factors_.data(), info_.data()); break;
      case BlockFactorization::gauss_huard:
      case BlockFactorization::gauss_huard_t:
        kernels::cpu::gauss_huard_factor(layout_, factors_.data(), piv_.data(), info_.data(), storage);
        break;
      case BlockFactorization::automatic:  // resolved by symbolic(): never reached
      case BlockFactorization::lu: kernels::cpu::lu_factor(layout_, factors_.data(), piv_.data(), info_.data()); break;
    }
    failed = kernels::cpu::count_nonzero(layout_.count, info_.data());
  }
  if (!factors32_.empty()) to_fp32(factors_, factors32_);  // fp32 storage: the inverses apply() reads
  if (failed == 0) return {};
  const auto info = info_.to_host();
  const auto first = std::find_if(info.begin(), info.end(), [](int v) { return v != 0; }) - info.begin();
  index_t first_row = static_cast<index_t>(first);  // natural blocks: block b is block row b
  if (mode_ == Mode::scalar) first_row = static_cast<index_t>(first / bs_);
  if (mode_ == Mode::agglomerated) first_row = row_off_.to_host()[first] / bs_;
  // Point (scalar) Jacobi inverts single diagonal entries, which may be 0 in a regular cell block
  // (a component absent at t = 0 has a zero pressure derivative): say what handles it.
  return {false,
          fmt::format("block-Jacobi ({}): {} singular Jacobi block(s), the first at block row {} (pivot {})",
                      to_string(fact_), failed, first_row, info[first]),
          mode_ == Mode::scalar && bs_ > 1 ? zero_pivot_hint : ""};
}

std::uint64_t BlockJacobiPreconditioner::launch_epoch() const
{
  LaunchKey k;
  k.add(factors_).add(factors32_).add(piv_).add(row_off_).add(mat_off_).add(std::uint64_t(layout_.count));
  k.add(std::uint64_t(layout_.uniform)).add(std::uint64_t(layout_.max_size)).add(std::uint64_t(fact_));
  k.add(reinterpret_cast<std::uintptr_t>(layout_.row_off)).add(reinterpret_cast<std::uintptr_t>(layout_.mat_off));
  return k.value();
}

// The factors (and pivots) once, r read and z written; fp32 inverses (no pivots) 4 bytes an entry.
double BlockJacobiPreconditioner::apply_bytes() const
{
  if (!factors32_.empty()) return 4.0 * double(factors32_.size()) + 16.0 * double(nrows_) * bs_;
  return 8.0 * double(factors_.size()) + 4.0 * double(piv_.size()) + 16.0 * double(nrows_) * bs_;
}

// The Jacobi blocks' entries read from the matrix and the factors written (their fp32 copy, the pivots of the
// factorisations that have them; Gauss–Jordan inverts without).
double BlockJacobiPreconditioner::setup_bytes() const
{
  const bool pivots = fact_ != BlockFactorization::gauss_jordan;
  return 16.0 * double(factors_.size()) + 4.0 * double(factors32_.size()) + (pivots ? 4.0 * double(piv_.size()) : 0.0);
}

void BlockJacobiPreconditioner::apply(const Vector& r, Vector& z) const
{
  if (r.size() != size64_t(nrows_) * bs_ || z.size() != r.size())
    throw std::invalid_argument("block-Jacobi apply: vector sizes do not match the setup matrix");
  if (layout_.count == 0) return;
  const kernels::GhStorage storage = fact_ == BlockFactorization::gauss_huard_t
                                         ? kernels::GhStorage::transposed
                                         : kernels::GhStorage::standard;
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    const auto s = exec_->stream();
    switch (fact_) {
      case BlockFactorization::gauss_jordan:
        if (!factors32_.empty()) kernels::cuda::block_diag_gemv(s, layout_, factors32_.data(), r.data(), z.data());
        else kernels::cuda::block_diag_gemv(s, layout_, factors_.data(), r.data(), z.data());
        break;
      case BlockFactorization::gauss_huard:
      case BlockFactorization::gauss_huard_t:
        kernels::cuda::gauss_huard_solve(s, layout_, factors_.data(), piv_.data(), storage, r.data(), z.data());
        break;
      case BlockFactorization::automatic:  // resolved by symbolic(): never reached
      case BlockFactorization::lu: kernels::cuda::lu_solve(s, layout_, factors_.data(), piv_.data(), r.data(), z.data()); break;
    }
#endif
  } else {
    switch (fact_) {
      case BlockFactorization::gauss_jordan:
        if (!factors32_.empty()) kernels::cpu::block_diag_gemv(layout_, factors32_.data(), r.data(), z.data());
        else kernels::cpu::block_diag_gemv(layout_, factors_.data(), r.data(), z.data());
        break;
      case BlockFactorization::gauss_huard:
      case BlockFactorization::gauss_huard_t:
        kernels::cpu::gauss_huard_solve(layout_, factors_.data(), piv_.data(), storage, r.data(), z.data());
        break;
      case BlockFactorization::automatic:  // resolved by symbolic(): never reached
      case BlockFactorization::lu: kernels::cpu::lu_solve(layout_, factors_.data(), piv_.data(), r.data(), z.data()); break;
    }
  }
}

}  // namespace blockres
