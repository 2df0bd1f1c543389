// Block ILU(0) preconditioner: exact block triangular solves or block ISAI (see
// block_ilu_preconditioner.hpp).
#include "linalg/preconditioners/ilu0/block_ilu_preconditioner.hpp"

#include "linalg/vector_ops.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace blockres {

namespace kc = kernels::cpu;
#if BLOCKRES_HAVE_CUDA
namespace kg = kernels::cuda;
#endif

BlockIlu0Preconditioner::BlockIlu0Preconditioner(ExecPtr exec, Ilu0Options opt) : Ilu0Base(std::move(exec), opt)
{
  if (opt_.factor_sweeps < 0 || opt_.factor_sweeps > max_factor_sweeps)
    throw std::invalid_argument(
        fmt::format("block ILU(0): factor_sweeps {} is not in 0..{}", opt_.factor_sweeps, max_factor_sweeps));
  if (opt_.implementation == IluImplementation::cusparse)
    throw std::invalid_argument("block ILU(0): implementation = cusparse needs factor_view = scalar (cuSPARSE has no "
                                "block ILU(0) with pivoted diagonal blocks)");
  if (opt_.trisolve == TriangularSolve::isai) {
    if (opt_.isai_power < 1 || opt_.isai_power > max_isai_power)
      throw std::invalid_argument(
          fmt::format("block ILU(0): isai_power {} is not in 1..{}", opt_.isai_power, max_isai_power));
    if (opt_.view != IsaiView::block)
      throw std::invalid_argument("block ILU(0): trisolve = isai needs the block ISAI view (isai_view = \"block\")");
    if (opt_.sweeps < 0 || opt_.sweeps > max_isai_sweeps)
      throw std::invalid_argument(
          fmt::format("block ILU(0): sweeps {} is not in 0..{}", opt_.sweeps, max_isai_sweeps));
  }
  if (opt_.storage == StoragePrecision::fp32 && opt_.trisolve != TriangularSolve::isai)
    throw std::invalid_argument("block ILU(0): storage = fp32 needs trisolve = isai (the exact solves read fp64 factors)");
}

BlockIlu0Preconditioner::~BlockIlu0Preconditioner() = default;

std::string BlockIlu0Preconditioner::name() const
{
  const std::string f = opt_.factor_sweeps > 0 ? fmt::format("block, {} factor sweeps", opt_.factor_sweeps) : "block";
  if (opt_.trisolve == TriangularSolve::exact) return fmt::format("ilu0({}, exact triangular solves)", f);
  const std::string fp32 = opt_.storage == StoragePrecision::fp32 ? ", fp32 storage" : "";
  if (opt_.sweeps > 0)
    return fmt::format("ilu0({}, isai({}, block view), {} sweeps{})", f, opt_.isai_power, opt_.sweeps, fp32);
  return fmt::format("ilu0({}, isai({}, block view){})", f, opt_.isai_power, fp32);
}

BsrView<const double> BlockIlu0Preconditioner::factors() const
{
  return {nrows_, nrows_, bs_, row_ptr_.data(), col_.data(), lu_.data()};
}

size64_t BlockIlu0Preconditioner::isai_nnz() const
{
  if (!isai_lower_) return 0;
  return (size64_t(isai_lower_->M().nnzb()) + isai_upper_->M().nnzb()) * bs_ * bs_;
}

const BsrMatrix* BlockIlu0Preconditioner::isai_matrix(kernels::Triangle tri) const
{
  if (!isai_lower_) return nullptr;
  return &(tri == kernels::Triangle::unit_lower ? isai_lower_ : isai_upper_)->M();
}

void BlockIlu0Preconditioner::symbolic(const BsrMatrix& A)
{
  if (A.nrows() != A.ncols()) throw std::invalid_argument("block ILU(0) needs a square matrix");
  const int bs = A.block_size();
  const size64_t bs2 = size64_t(bs) * bs;
  const auto brow = A.row_ptr().to_host();
  const auto bcol = A.col_ind().to_host();
  set_schedule(kernels::ilu_schedule(A.nrows(), brow.data(), bcol.data()));
  lower_blocks_ = 0;
  for (index_t i = 0; i < A.nrows(); ++i)
    for (index_t p = brow[i]; p < brow[i + 1]; ++p) lower_blocks_ += bcol[p] < i;
  row_ptr_ = Array<index_t>(exec_, std::span<const index_t>(brow));
  col_ = Array<index_t>(exec_, std::span<const index_t>(bcol));
  lu_ = Array<double>(exec_, size64_t(A.nnzb()) * bs2);
  dinv_ = Array<double>(exec_, size64_t(A.nrows()) * bs2);
  workspace_ = Array<double>();
#if BLOCKRES_HAVE_CUDA
  if (exec_->is_cuda()) workspace_ = Array<double>(exec_, kg::block_ilu0_workspace_doubles(sched_, bs));
#endif
  info_ = Array<int>(exec_, 2);
  sweep_plan_ = {};
  lu2_ = Array<double>();
  if (opt_.factor_sweeps > 0) {
    sweep_plan_ = kernels::block_ilu_sweep_plan(sched_, A.nrows(), brow.data(), bcol.data());
    pair_ptr_ = Array<size64_t>(exec_, std::span<const size64_t>(sweep_plan_.pair_ptr));
    pair_l_ = Array<index_t>(exec_, std::span<const index_t>(sweep_plan_.pair_l));
    pair_u_ = Array<index_t>(exec_, std::span<const index_t>(sweep_plan_.pair_u));
    row_of_ = Array<index_t>(exec_, std::span<const index_t>(sweep_plan_.row_of));
    diag_next_ = Array<index_t>(exec_, std::span<const index_t>(sweep_plan_.diag_next));
    lu2_ = Array<double>(exec_, size64_t(A.nnzb()) * bs2);
  }
  isai_lower_.reset();
  isai_upper_.reset();
  if (opt_.trisolve == TriangularSolve::isai) {
    isai_lower_ = std::make_unique<IsaiMatrix>(exec_, kernels::IsaiKind::unit_block_lower, A.nrows(), bs, brow, bcol,
                                               opt_.isai_power);
    isai_upper_ = std::make_unique<IsaiMatrix>(exec_, kernels::IsaiKind::block_upper, A.nrows(), bs, brow, bcol,
                                               opt_.isai_power);
  }
  lu32_ = Array<float>(), m32_lower_ = Array<float>(), m32_upper_ = Array<float>();
  if (opt_.storage == StoragePrecision::fp32 && isai_lower_) {
    lu32_ = Array<float>(exec_, lu_.size());
    m32_lower_ = Array<float>(exec_, isai_lower_->M().values().size());
    m32_upper_ = Array<float>(exec_, isai_upper_->M().values().size());
  }
  t_ = Vector(exec_, A.scalar_rows());
  w_ = opt_.trisolve == TriangularSolve::isai && opt_.sweeps > 0 ? Vector(exec_, A.scalar_rows()) : Vector();
  keep_structure(A);
}

SetupStatus BlockIlu0Preconditioner::setup(const BsrMatrix& A)
{
  if (new_structure(A)) symbolic(A);
  if (nrows_ == 0) return {};
  int bad = 0, bad_start = 0;
  if (opt_.factor_sweeps > 0) {
    // Iterative: start L = lower(A) D(A), U = upper(A); then the sweeps, each followed by the
    // inversion of the new diagonal blocks. Buffers alternate (Jacobi sweeps).
    auto view = [&](const Array<double>& v) {
      return BsrView<const double>{nrows_, nrows_, bs_, row_ptr_.data(), col_.data(), v.data()};
    };
    const BsrView<const double> Av{nrows_, nrows_, bs_, row_ptr_.data(), col_.data(), A.values().data()};
    if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
      const auto s = exec_->stream();
      const kernels::cuda::IluDeviceSchedule d{&sched_, diag_.data(), lower_rows_.data(), upper_rows_.data()};
      const kernels::cuda::BlockIluSweepDevicePlan dp{&sweep_plan_, pair_ptr_.data(), pair_l_.data(),
                                                      pair_u_.data(), row_of_.data(), diag_next_.data()};
      kg::block_ilu_invert_diagonal(s, d, dp, Av, dinv_.data(), info_.data() + 1, workspace_.data());
      // The buffers alternate; the start goes where the last sweep's result then lands in lu_, so
      // that every setup leaves the factors at the same address (a recording of apply() stays
      // valid: launch_epoch).
      double* cur = opt_.factor_sweeps % 2 == 1 ? lu2_.data() : lu_.data();
      double* next = opt_.factor_sweeps % 2 == 1 ? lu_.data() : lu2_.data();
      kg::block_ilu_sweep(s, dp, Av, nullptr, dinv_.data(), cur, false);
      for (int k = 0; k < opt_.factor_sweeps; ++k) {
        kg::block_ilu_sweep(s, dp, Av, cur, dinv_.data(), next, true);
        std::swap(cur, next);
        const BsrView<const double> Fv{nrows_, nrows_, bs_, row_ptr_.data(), col_.data(), cur};
        kg::block_ilu_invert_diagonal(s, d, dp, Fv, dinv_.data(), info_.data(), workspace_.data());
      }
      const auto info = info_.to_host();
      bad = info[0], bad_start = info[1];
#endif
    } else {
      bad_start = kc::block_ilu_invert_diagonal(sched_, Av, dinv_.data());
      kc::block_ilu_sweep(sweep_plan_, Av, nullptr, dinv_.data(), lu_.data(), false);
      for (int k = 0; k < opt_.factor_sweeps; ++k) {
        kc::block_ilu_sweep(sweep_plan_, Av, lu_.data(), dinv_.data(), lu2_.data(), true);
        std::swap(lu_, lu2_);
        bad = kc::block_ilu_invert_diagonal(sched_, view(lu_), dinv_.data());
      }
    }
    if (bad_start != 0)
      return {false, fmt::format("block ILU(0), iterative: singular or non-finite diagonal block A_ii at block row {}",
                                 bad_start - 1)};
  } else {
    lu_.copy_from(A.values());
    const BsrView<double> LU{nrows_, nrows_, bs_, row_ptr_.data(), col_.data(), lu_.data()};
    if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
      const kernels::cuda::IluDeviceSchedule d{&sched_, diag_.data(), lower_rows_.data(), upper_rows_.data()};
      kg::block_ilu0_factor(exec_->stream(), d, LU, dinv_.data(), info_.data(), workspace_.data());
      bad = info_.to_host()[0];
#endif
    } else {
      bad = kc::block_ilu0_factor(sched_, LU, dinv_.data());
    }
  }
  if (bad != 0)
    return {false, fmt::format("block ILU(0): singular or non-finite diagonal block U_ii at block row {}", bad - 1)};
  regenerate_isai();
  return {};
}

void BlockIlu0Preconditioner::regenerate_isai()
{
  if (!isai_lower_) return;
  // Block substitution with the inverted diagonal blocks the factorisation left in dinv_ (checked
  // there: every ISAI system is nonsingular up to the conditioning of U_ii; L's diagonal blocks
  // are the identity), so the generation is not checked (no sync).
  const kernels::BlockValuesView<const double> F{nrows_, bs_, row_ptr_.data(), col_.data(), lu_.data(),
                                                 kernels::BlockStorage::bsr};
  isai_lower_->generate_factor(F, nullptr);
  isai_upper_->generate_factor(F, dinv_.data());
  if (!lu32_.empty()) {  // fp32 storage: the copies apply() reads (saturating: an overflow shows as inf)
    to_fp32(lu_, lu32_);
    to_fp32(isai_lower_->M().values(), m32_lower_);
    to_fp32(isai_upper_->M().values(), m32_upper_);
  }
}

void BlockIlu0Preconditioner::triangular_apply(kernels::Triangle tri, const Vector& b, Vector& x) const
{
  const bool lower = tri == kernels::Triangle::unit_lower;
  const BsrView<const double> LU = factors();
  if (isai_lower_ && !lu32_.empty()) {  // fp32 storage
    const BsrMatrix& M = *isai_matrix(tri);
    const BsrView<const float> M32{M.nrows(), M.ncols(), bs_, M.row_ptr().data(), M.col_ind().data(),
                                   (lower ? m32_lower_ : m32_upper_).data()};
    const BsrView<const float> LU32{nrows_, nrows_, bs_, row_ptr_.data(), col_.data(), lu32_.data()};
    if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
      const auto s = exec_->stream();
      kg::bsr_gemv_fp32(s, M32, b.data(), 0.0, x.data());
      for (int k = 0; k < opt_.sweeps; ++k) {
        kg::block_triangle_residual(s, tri, LU32, b.data(), x.data(), w_.data());
        kg::bsr_gemv_fp32(s, M32, w_.data(), 1.0, x.data());
      }
#endif
    } else {
      kc::bsr_gemv_fp32(M32, b.data(), 0.0, x.data());
      for (int k = 0; k < opt_.sweeps; ++k) {
        kc::block_triangle_residual(tri, LU32, b.data(), x.data(), w_.data());
        kc::bsr_gemv_fp32(M32, w_.data(), 1.0, x.data());
      }
    }
    return;
  }
  if (isai_lower_) {
    const BsrMatrix& M = *isai_matrix(tri);
    M.apply(1.0, b, 0.0, x);
    for (int s = 0; s < opt_.sweeps; ++s) {  // x += M (b - T x)
      if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
        kg::block_triangle_residual(exec_->stream(), tri, LU, b.data(), x.data(), w_.data());
#endif
      } else {
        kc::block_triangle_residual(tri, LU, b.data(), x.data(), w_.data());
      }
      M.apply(1.0, w_, 1.0, x);
    }
    return;
  }
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    const kernels::cuda::IluDeviceSchedule d{&sched_, diag_.data(), lower_rows_.data(), upper_rows_.data()};
    if (lower) kg::block_ilu0_lower_solve(exec_->stream(), d, LU, b.data(), x.data());
    else kg::block_ilu0_upper_solve(exec_->stream(), d, LU, dinv_.data(), b.data(), x.data());
#endif
  } else {
    if (lower) kc::block_ilu0_lower_solve(sched_, LU, b.data(), x.data());
    else kc::block_ilu0_upper_solve(sched_, LU, dinv_.data(), b.data(), x.data());
  }
}

std::uint64_t BlockIlu0Preconditioner::launch_epoch() const
{
  LaunchKey k;
  k.add(row_ptr_).add(col_).add(lu_).add(dinv_).add(t_).add(w_).add(diag_).add(lower_rows_).add(upper_rows_);
  k.add(std::uint64_t(nrows_)).add(std::uint64_t(bs_)).add(std::uint64_t(opt_.sweeps));
  if (isai_lower_) k.add(isai_lower_->M()).add(isai_upper_->M());
  k.add(lu32_).add(m32_lower_).add(m32_upper_);
  return k.value();
}

// Per triangle: the ISAI product, then each sweep's residual w = b - T x (every column index of
// the rows, T's blocks, x, b and w) and product x += M w; or the exact solve (T's blocks, columns
// and, for U, the inverted diagonal blocks, b and x).
double BlockIlu0Preconditioner::apply_bytes() const
{
  if (nrows_ == 0) return 0.0;
  const double bs2 = 8.0 * double(bs_) * bs_, vec = 8.0 * double(nrows_) * bs_, rows = 4.0 * (double(nrows_) + 1.0);
  const double lower = double(lower_blocks_), upper = double(nnzb_) - lower;
  auto triangle = [&](kernels::Triangle tri, double blocks) {
    if (const BsrMatrix* M = isai_matrix(tri)) {
      if (!lu32_.empty()) {  // fp32 values (4 bytes), every column index, x (and y when it is added to)
        const double m = double(M->nnzb()) * (bs2 / 2.0 + 4.0) + rows;
        const double residual = 4.0 * double(nnzb_) + rows + blocks * bs2 / 2.0 + 3.0 * vec;
        return m + 2.0 * vec + opt_.sweeps * (residual + m + 3.0 * vec);
      }
      const double residual = 4.0 * double(nnzb_) + rows + blocks * bs2 + 3.0 * vec;
      return M->spmv_bytes(false) + opt_.sweeps * (residual + M->spmv_bytes(true));
    }
    return blocks * (bs2 + 4.0) + rows + 2.0 * vec + (tri == kernels::Triangle::upper ? double(nrows_) * bs2 : 0.0);
  };
  return triangle(kernels::Triangle::unit_lower, lower) + triangle(kernels::Triangle::upper, upper);
}

void BlockIlu0Preconditioner::apply(const Vector& r, Vector& z) const
{
  if (r.size() != size64_t(nrows_) * bs_ || z.size() != r.size())
    throw std::invalid_argument("block ILU(0) apply: vector sizes do not match the setup matrix");
  if (nrows_ == 0) return;
  triangular_apply(kernels::Triangle::unit_lower, r, t_);
  triangular_apply(kernels::Triangle::upper, t_, z);
}

}  // namespace blockres
