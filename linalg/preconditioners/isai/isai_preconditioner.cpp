// Block-view ISAI matrices and the general ISAI preconditioner (see isai_preconditioner.hpp).
#include "linalg/preconditioners/isai/isai_preconditioner.hpp"

#include "kernels/spmv/bsr_to_csr.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace blockres {

namespace kc = kernels::cpu;
#if BLOCKRES_HAVE_CUDA
namespace kg = kernels::cuda;
#endif

IsaiMatrix::IsaiMatrix(ExecPtr exec, kernels::IsaiKind kind, index_t nrows, int bs, const std::vector<index_t>& row_ptr,
                       const std::vector<index_t>& col_ind, int power)
    : exec_(std::move(exec)),
      pattern_(kernels::isai_block_pattern(kind, nrows, bs, row_ptr.data(), col_ind.data(), power))
{
  col_ptr_ = to_executor(exec_, pattern_.col_ptr);
  row_ind_ = to_executor(exec_, pattern_.row_ind);
  bsr_pos_ = to_executor(exec_, pattern_.bsr_pos);
  short_cols_ = to_executor(exec_, pattern_.short_cols);
  long_cols_ = to_executor(exec_, pattern_.long_cols);
  info_ = Array<int>(exec_, 1);  // the long columns' scratch: at the first generate() (generate_factor needs none)
  BsrPattern p;
  p.nrows = p.ncols = nrows;
  p.row_ptr = pattern_.row_ptr;
  p.col_ind = pattern_.col;
  M_ = std::make_unique<BsrMatrix>(exec_, bs, p);
}

int IsaiMatrix::generate(kernels::BlockValuesView<const double> A, bool check)
{
  if (A.nrows != pattern_.nrows || A.bs != pattern_.bs)
    throw std::invalid_argument("IsaiMatrix::generate: matrix dimensions differ from the pattern's");
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    if (const size64_t need = kg::isai_block_scratch_doubles(pattern_); scratch_.size() < need)
      scratch_ = Array<double>(exec_, need);
    kg::isai_block_generate(exec_->stream(), device_pattern(), A, M_->values().data(), scratch_.data(), info_.data());
    return check ? info_.to_host()[0] : 0;
#endif
  }
  (void)check;  // the CPU generation returns its status anyway
  return kc::isai_block_generate(pattern_, A, M_->values().data());
}

void IsaiMatrix::generate_factor(kernels::BlockValuesView<const double> F, const double* dinv)
{
  if (F.bs > kernels::isai_substitute_max_bs) {
    generate(F, false);
    return;
  }
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    kg::isai_block_substitute(exec_->stream(), device_pattern(), F, dinv, M_->values().data());
    return;
#endif
  }
  kc::isai_block_substitute(pattern_, F, dinv, M_->values().data());
}

kernels::cuda::IsaiBlockDevicePattern IsaiMatrix::device_pattern() const
{
  return {&pattern_, col_ptr_.data(), row_ind_.data(), bsr_pos_.data(), short_cols_.data(), long_cols_.data()};
}

IsaiPreconditioner::IsaiPreconditioner(ExecPtr exec, IsaiOptions opt) : exec_(std::move(exec)), opt_(opt)
{
  if (opt_.power < 1 || opt_.power > max_isai_power)
    throw std::invalid_argument(fmt::format("ISAI: isai_power {} is not in 1..{}", opt_.power, max_isai_power));
}

IsaiPreconditioner::~IsaiPreconditioner() = default;

std::string IsaiPreconditioner::name() const
{
  return fmt::format("isai({}, {} view)", opt_.power, to_string(opt_.view));
}

void IsaiPreconditioner::symbolic(const BsrMatrix& A)
{
  if (A.nrows() != A.ncols()) throw std::invalid_argument("ISAI needs a square matrix");
  isai_.reset();
  if (opt_.view == IsaiView::block) {
    isai_ = std::make_unique<IsaiMatrix>(exec_, kernels::IsaiKind::general, A.nrows(), A.block_size(),
                                         A.row_ptr().to_host(), A.col_ind().to_host(), opt_.power);
  } else {
    const size64_t n = A.scalar_rows();
    const size64_t nnz = size64_t(A.nnzb()) * A.block_size() * A.block_size();
    kernels::check_scalar_view_fits_int32("ISAI, scalar view", A.nrows(), A.ncols(), A.block_size(), A.nnzb());
    csr_row_ptr_ = Array<index_t>(exec_, n + 1);
    csr_col_ = Array<index_t>(exec_, nnz);
    csr_val_ = Array<double>(exec_, nnz);
    if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
      kg::bsr_to_csr(exec_->stream(), A.view(), csr_row_ptr_.data(), csr_col_.data(), csr_val_.data());
#endif
    } else {
      kc::bsr_to_csr(A.view(), csr_row_ptr_.data(), csr_col_.data(), csr_val_.data());
    }
    isai_ = std::make_unique<IsaiMatrix>(exec_, kernels::IsaiKind::general, static_cast<index_t>(n), 1,
                                         csr_row_ptr_.to_host(), csr_col_.to_host(), opt_.power);
  }
  pattern_key_ = A.pattern_id();
  nrows_ = A.nrows();
  nnzb_ = A.nnzb();
  bs_ = A.block_size();
}

SetupStatus IsaiPreconditioner::setup(const BsrMatrix& A)
{
  if (!isai_ || pattern_key_ != A.pattern_id() || nrows_ != A.nrows() || nnzb_ != A.nnzb() ||
      bs_ != A.block_size())
    symbolic(A);
  if (nrows_ == 0) return {};
  int bad = 0;
  if (opt_.view == IsaiView::block) {
    bad = isai_->generate({A.nrows(), A.block_size(), A.row_ptr().data(), A.col_ind().data(), A.values().data(),
                           kernels::BlockStorage::bsr});
  } else {
    if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
      kg::bsr_to_csr(exec_->stream(), A.view(), csr_row_ptr_.data(), csr_col_.data(), csr_val_.data());
#endif
    } else {
      kc::bsr_to_csr(A.view(), csr_row_ptr_.data(), csr_col_.data(), csr_val_.data());
    }
    bad = isai_->generate({static_cast<index_t>(A.scalar_rows()), 1, csr_row_ptr_.data(), csr_col_.data(),
                           csr_val_.data(), kernels::BlockStorage::bsr});
    if (bad != 0) {
      const index_t j = bad - 1;
      return {false, fmt::format("ISAI({}): singular local system for column {} (block column {}, component {})",
                                 opt_.power, j, j / bs_, j % bs_)};
    }
  }
  if (bad != 0)
    return {false, fmt::format("ISAI({}): singular local system for block column {}", opt_.power, bad - 1)};
  return {};
}

void IsaiPreconditioner::apply(const Vector& r, Vector& z) const
{
  if (!isai_) throw std::logic_error("ISAI apply before setup");
  if (r.size() != isai_->M().scalar_rows() || z.size() != r.size())
    throw std::invalid_argument("ISAI apply: vector sizes do not match the setup matrix");
  isai_->M().apply(1.0, r, 0.0, z);
}

}  // namespace blockres
