// Block-Jacobi setup/apply dispatch and the preconditioner factory.
#include "linalg/preconditioner.hpp"

#include "kernels/block_diag.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace blockres {

SetupStatus BlockJacobiPreconditioner::setup(const BsrMatrix& A)
{
  if (A.diag_pos().empty())
    throw std::invalid_argument("block-Jacobi needs a square matrix with every diagonal block in the pattern");
  if (nrows_ != A.nrows() || bs_ != A.block_size()) {  // symbolic part: once per structure
    nrows_ = A.nrows();
    bs_ = A.block_size();
    inverse_ = Array<double>(exec_, size64_t(nrows_) * bs_ * bs_);
    info_ = Array<int>(exec_, nrows_);
    counter_ = Array<index_t>(exec_, 1);
  }
  index_t failed = 0;
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    failed = kernels::cuda::invert_diagonal_blocks(exec_->stream(), A.view(), A.diag_pos().data(), inverse_.data(),
                                                   info_.data(), counter_.data());
#endif
  } else {
    failed = kernels::cpu::invert_diagonal_blocks(A.view(), A.diag_pos().data(), inverse_.data(), info_.data());
  }
  if (failed == 0) return {};
  const auto info = info_.to_host();
  const auto first = std::find_if(info.begin(), info.end(), [](int v) { return v != 0; }) - info.begin();
  return {false, fmt::format("block-Jacobi: {} singular diagonal block(s), first at block row {} (pivot {})", failed,
                             first, info[first])};
}

void BlockJacobiPreconditioner::apply(const Vector& r, Vector& z) const
{
  if (r.size() != size64_t(nrows_) * bs_ || z.size() != r.size())
    throw std::invalid_argument("block-Jacobi apply: vector sizes do not match the setup matrix");
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    kernels::cuda::block_diag_apply(exec_->stream(), nrows_, bs_, inverse_.data(), r.data(), z.data());
#endif
  } else {
    kernels::cpu::block_diag_apply(nrows_, bs_, inverse_.data(), r.data(), z.data());
  }
}

std::unique_ptr<Preconditioner> make_preconditioner(PreconditionerType type, ExecPtr exec)
{
  switch (type) {
    case PreconditionerType::none: return std::make_unique<IdentityPreconditioner>();
    case PreconditionerType::block_jacobi: return std::make_unique<BlockJacobiPreconditioner>(std::move(exec));
  }
  throw std::invalid_argument("unknown preconditioner type");
}

}  // namespace blockres
