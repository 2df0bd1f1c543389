// ILU(0) preconditioner: exact or ISAI triangular solves (see ilu_preconditioner.hpp).
#include "linalg/preconditioners/ilu0/ilu_preconditioner.hpp"

#include "kernels/spmv/bsr_to_csr.hpp"
#include "linalg/preconditioners/ilu0/cusparse_ilu0.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace blockres {

namespace kc = kernels::cpu;
#if BLOCKRES_HAVE_CUDA
namespace kg = kernels::cuda;
#endif

// ISAI of one factor: the pattern, its device copy, and M as a bs = 1 BSR matrix (so it is
// applied by the project's SpMV).
struct Ilu0Preconditioner::Isai {
  kernels::IsaiPattern pattern;
  Array<index_t> col_ptr, row_ind, csr_pos, short_cols, long_cols;
  Array<double> scratch;
  std::unique_ptr<BsrMatrix> M;

  Isai(const ExecPtr& exec, kernels::Triangle tri, index_t n, const std::vector<index_t>& row_ptr,
       const std::vector<index_t>& col, int power)
      : pattern(kernels::isai_pattern(tri, n, row_ptr.data(), col.data(), power))
  {
    col_ptr = to_executor(exec, pattern.col_ptr);
    row_ind = to_executor(exec, pattern.row_ind);
    csr_pos = to_executor(exec, pattern.csr_pos);
    short_cols = to_executor(exec, pattern.short_cols);
    long_cols = to_executor(exec, pattern.long_cols);
    scratch = Array<double>(exec, pattern.scratch_doubles());
    BsrPattern p;
    p.nrows = p.ncols = n;
    p.row_ptr = pattern.row_ptr;
    p.col_ind = pattern.col;
    M = std::make_unique<BsrMatrix>(exec, 1, p);
  }

  void generate(const Executor& exec, kernels::CsrView<const double> LU)
  {
    if (exec.is_cuda()) {
#if BLOCKRES_HAVE_CUDA
      const kg::IsaiDevicePattern d{&pattern,       col_ptr.data(),    row_ind.data(),
                                    csr_pos.data(), short_cols.data(), long_cols.data()};
      kg::isai_generate(exec.stream(), d, LU, M->values().data(), scratch.data());
#endif
    } else {
      kc::isai_generate(pattern, LU, M->values().data());
    }
  }
};

Ilu0Preconditioner::Ilu0Preconditioner(ExecPtr exec, Ilu0Options opt) : Ilu0Base(std::move(exec), opt)
{
  if (opt_.isai_power < 1 || opt_.isai_power > max_isai_power)
    throw std::invalid_argument(fmt::format("ILU(0): isai_power {} is not in 1..{}", opt_.isai_power, max_isai_power));
  if (opt_.sweeps < 0 || opt_.sweeps > max_isai_sweeps)
    throw std::invalid_argument(fmt::format("ILU(0): sweeps {} is not in 0..{}", opt_.sweeps, max_isai_sweeps));
  if (opt_.storage != StoragePrecision::fp64)
    throw std::invalid_argument("ILU(0), scalar view: storage = fp32 needs factor_view = block with trisolve = isai");
  if (opt_.implementation == IluImplementation::cusparse && !exec_->is_cuda())
    throw std::invalid_argument("ILU(0): implementation = cusparse needs the CUDA backend");
  // Issue 31 item 5: cuSPARSE's factorisation and exact solves were faster than the project's at every
  // block size measured (ilu0_options.hpp), so "automatic" takes them on CUDA.
  use_cusparse_ = exec_->is_cuda() && opt_.implementation != IluImplementation::blockres;
}

Ilu0Preconditioner::~Ilu0Preconditioner() = default;

std::string Ilu0Preconditioner::name() const
{
  if (opt_.trisolve == TriangularSolve::exact) return "ilu0(exact triangular solves)";
  const std::string isai = fmt::format("isai({}, {} view)", opt_.isai_power, to_string(opt_.view));
  return opt_.sweeps > 0 ? fmt::format("ilu0({}, {} sweeps)", isai, opt_.sweeps) : fmt::format("ilu0({})", isai);
}

std::string Ilu0Preconditioner::setup_summary() const
{
  // The name stays the same on both backends (it names the preconditioner, not whose code computes it).
  if (cusparse_bsr_) return "ILU(0) by cuSPARSE (bsrilu02, bsrsv2 solves)";
  if (!use_cusparse_) return {};
  return opt_.trisolve == TriangularSolve::exact ? "ILU(0) by cuSPARSE (csrilu02, SpSV solves)"
                                                 : "ILU(0) by cuSPARSE (csrilu02)";
}

void Ilu0Preconditioner::refresh_csr_factors()
{
  if (!cusparse_bsr_) return;
#if BLOCKRES_HAVE_CUDA
  const BsrView<const double> F{nrows_, nrows_, bs_, block_row_ptr_.data(), block_col_.data(), bsr_val_.data()};
  kg::bsr_to_csr(exec_->stream(), F, lu_row_ptr_.data(), lu_col_.data(), lu_val_.data());
#endif
}

size64_t Ilu0Preconditioner::isai_nnz() const
{
  if (isai_lower_) return size64_t(isai_lower_->pattern.nnz()) + isai_upper_->pattern.nnz();
  if (block_lower_) return (size64_t(block_lower_->M().nnzb()) + block_upper_->M().nnzb()) * bs_ * bs_;
  return 0;
}

const BsrMatrix* Ilu0Preconditioner::isai_matrix(kernels::Triangle tri) const
{
  const bool lower = tri == kernels::Triangle::unit_lower;
  if (isai_lower_) return (lower ? isai_lower_ : isai_upper_)->M.get();
  if (block_lower_) return &(lower ? block_lower_ : block_upper_)->M();
  return nullptr;
}

void Ilu0Preconditioner::regenerate_isai()
{
  if (n_ == 0) return;
  if (isai_lower_) {
    isai_lower_->generate(*exec_, lu_view());
    isai_upper_->generate(*exec_, lu_view());
  }
  if (block_lower_) {
    // The factors in the block storage of the scalar expansion. L's unit diagonal and the
    // triangles of the diagonal blocks are taken by the kinds, so both read the same values.
    const kernels::BlockValuesView<const double> LU{nrows_, bs_, block_row_ptr_.data(), block_col_.data(),
                                                    lu_val_.data(), kernels::BlockStorage::scalar_rows};
    block_lower_->generate(LU, false);
    block_upper_->generate(LU, false);
  }
}

kernels::CsrView<const double> Ilu0Preconditioner::lu_view() const
{
  return {n_, lu_row_ptr_.data(), lu_col_.data(), lu_val_.data()};
}

void Ilu0Preconditioner::symbolic(const BsrMatrix& A)
{
  if (A.nrows() != A.ncols()) throw std::invalid_argument("ILU(0) needs a square matrix");
  const size64_t n = A.scalar_rows();
  const size64_t nnz = size64_t(A.nnzb()) * A.block_size() * A.block_size();
  kernels::check_scalar_view_fits_int32("ILU(0), scalar view", A.nrows(), A.ncols(), A.block_size(), A.nnzb());
  n_ = static_cast<index_t>(n);
  lu_row_ptr_ = Array<index_t>(exec_, n + 1);
  lu_col_ = Array<index_t>(exec_, nnz);
  lu_val_ = Array<double>(exec_, nnz);
  // The pattern once, through the same expansion the numeric setup uses.
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    kg::bsr_to_csr(exec_->stream(), A.view(), lu_row_ptr_.data(), lu_col_.data(), lu_val_.data());
#endif
  } else {
    kc::bsr_to_csr(A.view(), lu_row_ptr_.data(), lu_col_.data(), lu_val_.data());
  }
  const auto row_ptr = lu_row_ptr_.to_host();
  const auto col = lu_col_.to_host();
  set_schedule(kernels::ilu_schedule(n_, row_ptr.data(), col.data()));
  info_ = Array<int>(exec_, 1);
  cusparse_.reset();
  cusparse_bsr_ = false;
  bsr_val_ = Array<double>();
  pivot_pos_ = Array<index_t>();
  const bool bsr_form = use_cusparse_ && opt_.trisolve == TriangularSolve::exact &&
                        A.block_size() >= cusparse_bsr_min_block_size && A.block_size() <= cusparse_bsr_max_block_size;
  if (use_cusparse_ && n_ > 0 && !bsr_form)
    cusparse_ = std::make_unique<CusparseIlu0>(exec_, CusparseIlu0::Form::csr, n_, static_cast<index_t>(nnz), 1,
                                               lu_row_ptr_.data(), lu_col_.data(), lu_val_.data());
  if (bsr_form && n_ > 0) {
    // bsrilu02 + bsrsv2 on a copy of A's BSR storage; the pivot of scalar row R * bs + a is entry (a, a) of
    // block row R's diagonal block.
    const auto brow = A.row_ptr().to_host();
    const auto bcol = A.col_ind().to_host();
    block_row_ptr_ = Array<index_t>(exec_, std::span<const index_t>(brow));
    block_col_ = Array<index_t>(exec_, std::span<const index_t>(bcol));
    bsr_val_ = Array<double>(exec_, nnz);
    const int bs = A.block_size();
    std::vector<index_t> pos(static_cast<std::size_t>(n_));
    for (index_t R = 0; R < A.nrows(); ++R) {
      index_t d = -1;
      for (index_t q = brow[R]; q < brow[R + 1]; ++q)
        if (bcol[q] == R) d = q;
      // ilu_schedule above has checked that every scalar row has its diagonal, so d >= 0.
      for (int a = 0; a < bs; ++a) pos[std::size_t(R) * bs + a] = d * bs * bs + a * bs + a;
    }
    pivot_pos_ = Array<index_t>(exec_, std::span<const index_t>(pos));
    cusparse_ = std::make_unique<CusparseIlu0>(exec_, CusparseIlu0::Form::bsr, A.nrows(), A.nnzb(), bs,
                                               block_row_ptr_.data(), block_col_.data(), bsr_val_.data());
    cusparse_bsr_ = true;
  }
  isai_lower_.reset();
  isai_upper_.reset();
  block_lower_.reset();
  block_upper_.reset();
  if (opt_.trisolve == TriangularSolve::isai && opt_.view == IsaiView::scalar) {
    isai_lower_ = std::make_unique<Isai>(exec_, kernels::Triangle::unit_lower, n_, row_ptr, col, opt_.isai_power);
    isai_upper_ = std::make_unique<Isai>(exec_, kernels::Triangle::upper, n_, row_ptr, col, opt_.isai_power);
  } else if (opt_.trisolve == TriangularSolve::isai) {
    const auto brow = A.row_ptr().to_host();
    const auto bcol = A.col_ind().to_host();
    block_row_ptr_ = Array<index_t>(exec_, std::span<const index_t>(brow));
    block_col_ = Array<index_t>(exec_, std::span<const index_t>(bcol));
    block_lower_ = std::make_unique<IsaiMatrix>(exec_, kernels::IsaiKind::unit_lower, A.nrows(), A.block_size(),
                                                brow, bcol, opt_.isai_power);
    block_upper_ = std::make_unique<IsaiMatrix>(exec_, kernels::IsaiKind::upper, A.nrows(), A.block_size(), brow,
                                                bcol, opt_.isai_power);
  }
  t_ = Vector(exec_, n);
  w_ = Vector(exec_, n);
  keep_structure(A);
}

SetupStatus Ilu0Preconditioner::setup(const BsrMatrix& A)
{
  if (new_structure(A)) symbolic(A);
  if (n_ == 0) return {};
  int bad = 0;
  kernels::CsrView<double> LU{n_, lu_row_ptr_.data(), lu_col_.data(), lu_val_.data()};
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    const auto s = exec_->stream();
    if (!cusparse_bsr_) kg::bsr_to_csr(s, A.view(), lu_row_ptr_.data(), lu_col_.data(), lu_val_.data());
    const kg::IluDeviceSchedule d{&sched_, diag_.data(), lower_rows_.data(), upper_rows_.data()};
    // cuSPARSE: then the same pivot rule as ours (csrilu02 and bsrilu02 flag exact zeros only).
    if (cusparse_bsr_) {
      bsr_val_.copy_from(A.values());
      cusparse_->factor();
      kg::ilu0_check_pivots(s, n_, pivot_pos_.data(), bsr_val_.data(), info_.data());
    } else if (cusparse_) {
      cusparse_->factor();
      kg::ilu0_check_pivots(s, n_, diag_.data(), lu_val_.data(), info_.data());
    } else {
      kg::ilu0_factor(s, d, LU, info_.data());
    }
    bad = info_.to_host()[0];
#endif
  } else {
    kc::bsr_to_csr(A.view(), lu_row_ptr_.data(), lu_col_.data(), lu_val_.data());
    bad = kc::ilu0_factor(sched_, LU);
  }
  if (bad != 0) {
    const index_t row = bad - 1;
    // A scalar factorisation meets a zero diagonal entry inside a cell block that is itself
    // regular, e.g. the pressure derivative of a component absent at t = 0: say what handles it.
    return {false, fmt::format("ILU(0): zero or non-finite pivot at block row {} (component {})", row / bs_, row % bs_),
            bs_ > 1 ? zero_pivot_hint : ""};
  }
  // Only the setup above has to synchronise: the ILU(0) pivots are checked, so every triangular
  // system of the ISAI has a nonzero diagonal (L's is 1, U's are the checked pivots).
  regenerate_isai();
  return {};
}

// x = T^{-1} b for one factor T: exact solve, or the ISAI product plus sweeps. x != b.
void Ilu0Preconditioner::triangular_apply(kernels::Triangle tri, const Vector& b, Vector& x) const
{
  const bool lower = tri == kernels::Triangle::unit_lower;
  if (opt_.trisolve == TriangularSolve::exact) {
    if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
      if (cusparse_) {
        cusparse_->solve(tri, b.data(), x.data());
        return;
      }
      const kg::IluDeviceSchedule d{&sched_, diag_.data(), lower_rows_.data(), upper_rows_.data()};
      if (lower) kg::ilu0_lower_solve(exec_->stream(), d, lu_view(), b.data(), x.data());
      else kg::ilu0_upper_solve(exec_->stream(), d, lu_view(), b.data(), x.data());
#endif
    } else {
      if (lower) kc::ilu0_lower_solve(sched_, lu_view(), b.data(), x.data());
      else kc::ilu0_upper_solve(sched_, lu_view(), b.data(), x.data());
    }
    return;
  }
  const BsrMatrix& M = *isai_matrix(tri);
  M.apply(1.0, b, 0.0, x);
  for (int s = 0; s < opt_.sweeps; ++s) {  // x += M (b - T x)
    if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
      kg::triangle_spmv(exec_->stream(), tri, lu_view(), x.data(), w_.data());
#endif
    } else {
      kc::triangle_spmv(tri, lu_view(), x.data(), w_.data());
    }
    axpby(1.0, b, -1.0, w_);
    M.apply(1.0, w_, 1.0, x);
  }
}

void Ilu0Preconditioner::apply(const Vector& r, Vector& z) const
{
  if (r.size() != size64_t(n_) || z.size() != r.size())
    throw std::invalid_argument("ILU(0) apply: vector sizes do not match the setup matrix");
  if (n_ == 0) return;
  triangular_apply(kernels::Triangle::unit_lower, r, t_);
  triangular_apply(kernels::Triangle::upper, t_, z);
}

}  // namespace blockres
