// cuSPARSE ILU(0) and triangular-solve baselines (see bench_ilu_cusparse.hpp).
#include "miniapp/bench/bench_ilu_cusparse.hpp"

#include "kernels/spmv/bsr_to_csr.hpp"
#include "linalg/preconditioners/ilu0/cusparse_ilu0.hpp"
#include "miniapp/bench/bench_common.hpp"

#include <vector>

namespace blockres::benchutil {

struct CusparseIlu::Impl {
  const BsrMatrix& A;
  bool block;
  ExecPtr e;
  int bs = 1;
  // CSR: the expansion's arrays; BSR: A's own row_ptr / col_ind.
  Array<index_t> csr_row_ptr, csr_col;
  Array<double> a_val;   // pristine values (CSR order or BSR order)
  Array<double> lu_val;  // factor storage
  std::vector<index_t> host_row_ptr;  // block rows (BSR) for factors_as_csr
  // The product's (linalg/preconditioners/ilu0/cusparse_ilu0.hpp): csrilu02 + SpSV on the expansion, or
  // bsrilu02 + bsrsv2 on the BSR arrays (block).
  std::unique_ptr<CusparseIlu0> ilu;

  Impl(const BsrMatrix& m, bool blk) : A(m), block(blk), e(m.exec_ptr()), bs(m.block_size())
  {
    // Both paths take 32-bit indices (int arguments, CUSPARSE_INDEX_32I): before anything is allocated.
    kernels::check_scalar_view_fits_int32(block ? "cuSPARSE bsrilu02 + bsrsv2" : "cuSPARSE csrilu02 + SpSV", A.nrows(),
                                          A.ncols(), bs, A.nnzb());
    const size64_t nvals = size64_t(A.nnzb()) * bs * bs;
    a_val = Array<double>(e, nvals);
    lu_val = Array<double>(e, nvals);
    if (block) {
      a_val.copy_from(A.values());
      host_row_ptr = A.row_ptr().to_host();
      load();
      ilu = std::make_unique<CusparseIlu0>(e, CusparseIlu0::Form::bsr, A.nrows(), A.nnzb(), bs, A.row_ptr().data(),
                                           A.col_ind().data(), lu_val.data());
    } else {
      const index_t rows = static_cast<index_t>(A.scalar_rows());
      csr_row_ptr = Array<index_t>(e, rows + 1);
      csr_col = Array<index_t>(e, nvals);
      kernels::cuda::bsr_to_csr(e->stream(), A.view(), csr_row_ptr.data(), csr_col.data(), a_val.data());
      load();
      ilu = std::make_unique<CusparseIlu0>(e, CusparseIlu0::Form::csr, rows, static_cast<index_t>(nvals), 1,
                                           csr_row_ptr.data(), csr_col.data(), lu_val.data());
    }
    factor();
    e->synchronize();
  }

  void load() { lu_val.copy_from(a_val); }
  void factor() { ilu->factor(); }
  void solve(const Array<double>& r, Array<double>& t, Array<double>& z)
  {
    ilu->solve(kernels::Triangle::unit_lower, r.data(), t.data());
    ilu->solve(kernels::Triangle::upper, t.data(), z.data());
  }
};

CusparseIlu::CusparseIlu(const BsrMatrix& A, bool block) : impl_(std::make_unique<Impl>(A, block)) {}
CusparseIlu::~CusparseIlu() = default;
void CusparseIlu::load_values() { impl_->load(); }
void CusparseIlu::factor() { impl_->factor(); }

int CusparseIlu::zero_pivot() { return impl_->ilu->zero_pivot(); }

void CusparseIlu::solve(const Array<double>& r, Array<double>& t, Array<double>& z) { impl_->solve(r, t, z); }

std::vector<double> CusparseIlu::factors_as_csr() const
{
  const Impl& m = *impl_;
  std::vector<double> v = m.lu_val.to_host();
  if (!m.block) return v;
  // BSR block q of block row R, entry (a, c) -> the expansion's position (kernels/spmv/bsr_to_csr.hpp).
  const int bs = m.bs;
  std::vector<double> out(v.size());
  for (index_t R = 0; R < m.A.nrows(); ++R) {
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
