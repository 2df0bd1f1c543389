// cuSPARSE ILU(0) and triangular-solve baselines (see bench_ilu_cusparse.hpp).
#include "miniapp/bench/bench_ilu_cusparse.hpp"

#include "kernels/spmv/bsr_to_csr.hpp"
#include "linalg/preconditioners/ilu0/cusparse_ilu0.hpp"
#include "miniapp/bench/bench_common.hpp"

#include <cusparse.h>

#include <vector>

// csrilu02, bsrilu02 and bsrsv2 are deprecated (and still shipped) in CUDA 13: this file is the
// baseline that measures them, so their deprecation warnings are expected here and nowhere else.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace blockres::benchutil {

struct CusparseIlu::Impl {
  const BsrMatrix& A;
  bool block;
  ExecPtr e;
  int bs = 1;
  int rows = 0;  // scalar rows (CSR) or block rows (BSR)
  int nnz = 0;   // scalar entries (CSR) or blocks (BSR)
  cusparseHandle_t handle = nullptr;
  // CSR: the expansion's arrays; BSR: A's own row_ptr / col_ind.
  Array<index_t> csr_row_ptr, csr_col;
  Array<double> a_val;   // pristine values (CSR order or BSR order)
  Array<double> lu_val;  // factor storage
  std::vector<index_t> host_row_ptr;  // block rows (BSR) for factors_as_csr
  Array<char> ilu_buf, l_buf, u_buf;
  // csrilu02 / SpSV: the product's (linalg/preconditioners/ilu0/cusparse_ilu0.hpp) on the expansion
  std::unique_ptr<CusparseCsrIlu0> csr;
  cusparseMatDescr_t descr = nullptr;
  // bsrilu02 / bsrsv2
  bsrilu02Info_t bsr_info = nullptr;
  bsrsv2Info_t bsv_l = nullptr, bsv_u = nullptr;
  cusparseMatDescr_t descr_l = nullptr, descr_u = nullptr;
  static constexpr auto policy = CUSPARSE_SOLVE_POLICY_USE_LEVEL;
  static constexpr auto dir = CUSPARSE_DIRECTION_ROW;

  Impl(const BsrMatrix& m, bool blk) : A(m), block(blk), e(m.exec_ptr()), bs(m.block_size())
  {
    // Both paths take 32-bit indices (int arguments, CUSPARSE_INDEX_32I): before anything is allocated.
    kernels::check_scalar_view_fits_int32(block ? "cuSPARSE bsrilu02 + bsrsv2" : "cuSPARSE csrilu02 + SpSV", A.nrows(),
                                          A.ncols(), bs, A.nnzb());
    const auto s = e->stream();
    BLOCKRES_CUSPARSE_CHECK(cusparseCreate(&handle));
    BLOCKRES_CUSPARSE_CHECK(cusparseSetStream(handle, s));
    const size64_t nvals = size64_t(A.nnzb()) * bs * bs;
    a_val = Array<double>(e, nvals);
    lu_val = Array<double>(e, nvals);
    if (block) {
      rows = A.nrows();
      nnz = A.nnzb();
      a_val.copy_from(A.values());
      host_row_ptr = A.row_ptr().to_host();
    } else {
      rows = static_cast<int>(A.scalar_rows());
      nnz = static_cast<int>(nvals);
      csr_row_ptr = Array<index_t>(e, rows + 1);
      csr_col = Array<index_t>(e, nvals);
      kernels::cuda::bsr_to_csr(s, A.view(), csr_row_ptr.data(), csr_col.data(), a_val.data());
    }
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateMatDescr(&descr));
    cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO);
    cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL);
    load();
    if (block)
      setup_bsr();
    else
      setup_csr();
  }

  const index_t* row_ptr() const { return block ? A.row_ptr().data() : csr_row_ptr.data(); }
  const index_t* col() const { return block ? A.col_ind().data() : csr_col.data(); }
  void load() { lu_val.copy_from(a_val); }

  static Array<char> buffer(const ExecPtr& e, std::size_t bytes) { return Array<char>(e, size64_t(std::max<std::size_t>(bytes, 8))); }

  void factor()
  {
    if (block)
      BLOCKRES_CUSPARSE_CHECK(cusparseDbsrilu02(handle, dir, rows, nnz, descr, lu_val.data(), row_ptr(), col(), bs,
                                                bsr_info, policy, ilu_buf.data()));
    else
      csr->factor();
  }

  void setup_csr()
  {
    csr = std::make_unique<CusparseCsrIlu0>(e, rows, nnz, csr_row_ptr.data(), csr_col.data(), lu_val.data());
    factor();
    e->synchronize();
  }

  void setup_bsr()
  {
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateBsrilu02Info(&bsr_info));
    int bytes = 0;
    BLOCKRES_CUSPARSE_CHECK(cusparseDbsrilu02_bufferSize(handle, dir, rows, nnz, descr, lu_val.data(), row_ptr(),
                                                         col(), bs, bsr_info, &bytes));
    ilu_buf = buffer(e, std::size_t(bytes));
    BLOCKRES_CUSPARSE_CHECK(cusparseDbsrilu02_analysis(handle, dir, rows, nnz, descr, lu_val.data(), row_ptr(), col(),
                                                       bs, bsr_info, policy, ilu_buf.data()));
    factor();
    auto make = [&](cusparseMatDescr_t& d, bsrsv2Info_t& info, cusparseFillMode_t fill, cusparseDiagType_t diag,
                    Array<char>& buf) {
      BLOCKRES_CUSPARSE_CHECK(cusparseCreateMatDescr(&d));
      cusparseSetMatIndexBase(d, CUSPARSE_INDEX_BASE_ZERO);
      cusparseSetMatType(d, CUSPARSE_MATRIX_TYPE_GENERAL);
      cusparseSetMatFillMode(d, fill);
      cusparseSetMatDiagType(d, diag);
      BLOCKRES_CUSPARSE_CHECK(cusparseCreateBsrsv2Info(&info));
      int b = 0;
      BLOCKRES_CUSPARSE_CHECK(cusparseDbsrsv2_bufferSize(handle, dir, CUSPARSE_OPERATION_NON_TRANSPOSE, rows, nnz, d,
                                                         lu_val.data(), row_ptr(), col(), bs, info, &b));
      buf = buffer(e, std::size_t(b));
      BLOCKRES_CUSPARSE_CHECK(cusparseDbsrsv2_analysis(handle, dir, CUSPARSE_OPERATION_NON_TRANSPOSE, rows, nnz, d,
                                                       lu_val.data(), row_ptr(), col(), bs, info, policy, buf.data()));
    };
    make(descr_l, bsv_l, CUSPARSE_FILL_MODE_LOWER, CUSPARSE_DIAG_TYPE_UNIT, l_buf);
    make(descr_u, bsv_u, CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT, u_buf);
    e->synchronize();
  }

  void solve(const Array<double>& r, Array<double>& t, Array<double>& z)
  {
    const double one = 1.0;
    if (block) {
      BLOCKRES_CUSPARSE_CHECK(cusparseDbsrsv2_solve(handle, dir, CUSPARSE_OPERATION_NON_TRANSPOSE, rows, nnz, &one,
                                                    descr_l, lu_val.data(), row_ptr(), col(), bs, bsv_l, r.data(),
                                                    t.data(), policy, l_buf.data()));
      BLOCKRES_CUSPARSE_CHECK(cusparseDbsrsv2_solve(handle, dir, CUSPARSE_OPERATION_NON_TRANSPOSE, rows, nnz, &one,
                                                    descr_u, lu_val.data(), row_ptr(), col(), bs, bsv_u, t.data(),
                                                    z.data(), policy, u_buf.data()));
      return;
    }
    csr->solve(kernels::Triangle::unit_lower, r.data(), t.data());
    csr->solve(kernels::Triangle::upper, t.data(), z.data());
  }

  ~Impl()
  {
    if (bsr_info) cusparseDestroyBsrilu02Info(bsr_info);
    if (bsv_l) cusparseDestroyBsrsv2Info(bsv_l);
    if (bsv_u) cusparseDestroyBsrsv2Info(bsv_u);
    if (descr_l) cusparseDestroyMatDescr(descr_l);
    if (descr_u) cusparseDestroyMatDescr(descr_u);
    if (descr) cusparseDestroyMatDescr(descr);
    if (handle) cusparseDestroy(handle);
  }
};

CusparseIlu::CusparseIlu(const BsrMatrix& A, bool block) : impl_(std::make_unique<Impl>(A, block)) {}
CusparseIlu::~CusparseIlu() = default;
void CusparseIlu::load_values() { impl_->load(); }
void CusparseIlu::factor() { impl_->factor(); }

int CusparseIlu::zero_pivot()
{
  int pos = -1;
  if (!impl_->block) return impl_->csr->zero_pivot();
  const cusparseStatus_t st = cusparseXbsrilu02_zeroPivot(impl_->handle, impl_->bsr_info, &pos);
  if (st != CUSPARSE_STATUS_SUCCESS && st != CUSPARSE_STATUS_ZERO_PIVOT) BLOCKRES_CUSPARSE_CHECK(st);
  return st == CUSPARSE_STATUS_ZERO_PIVOT ? pos : -1;
}

void CusparseIlu::solve(const Array<double>& r, Array<double>& t, Array<double>& z) { impl_->solve(r, t, z); }

std::vector<double> CusparseIlu::factors_as_csr() const
{
  const Impl& m = *impl_;
  std::vector<double> v = m.lu_val.to_host();
  if (!m.block) return v;
  // BSR block q of block row R, entry (a, c) -> the expansion's position (kernels/spmv/bsr_to_csr.hpp).
  const int bs = m.bs;
  std::vector<double> out(v.size());
  for (index_t R = 0; R < m.rows; ++R) {
    const index_t q0 = m.host_row_ptr[R], len = m.host_row_ptr[R + 1] - q0;
    for (index_t q = q0; q < q0 + len; ++q)
      for (int a = 0; a < bs; ++a)
        for (int c = 0; c < bs; ++c)
          out[size64_t(q0) * bs * bs + size64_t(a) * len * bs + size64_t(q - q0) * bs + c] =
              v[size64_t(q) * bs * bs + size64_t(a) * bs + c];
  }
  return out;
}

}  // namespace blockres::benchutil
