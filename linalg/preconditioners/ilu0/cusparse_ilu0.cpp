// cuSPARSE's scalar ILU(0) and triangular solves (see cusparse_ilu0.hpp).
#include "linalg/preconditioners/ilu0/cusparse_ilu0.hpp"


#if BLOCKRES_HAVE_CUDA
#include "kernels/cuda_check.hpp"
#include "linalg/array.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>

// csrilu02, bsrilu02 and bsrsv2 are deprecated (and still shipped) in CUDA 13, with no replacement in the
// generic API: their deprecation warnings are expected in this file and nowhere else.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace blockres {

namespace {

// Device scratch of at least 8 bytes (cuSPARSE rejects null buffers of size 0), through the executor's
// allocation (so a device that cannot hold it says what was needed and free).
Array<char> buffer(const ExecPtr& e, std::size_t bytes) { return Array<char>(e, size64_t(std::max<std::size_t>(bytes, 8))); }

// A general, zero-based matrix descriptor (the BSR solves' set their fill mode and diagonal type on top).
cusparseMatDescr_t general_descr()
{
  cusparseMatDescr_t d = nullptr;
  BLOCKRES_CUSPARSE_CHECK(cusparseCreateMatDescr(&d));
  BLOCKRES_CUSPARSE_CHECK(cusparseSetMatIndexBase(d, CUSPARSE_INDEX_BASE_ZERO));
  BLOCKRES_CUSPARSE_CHECK(cusparseSetMatType(d, CUSPARSE_MATRIX_TYPE_GENERAL));
  return d;
}

// What both forms start from: a handle on the executor's stream and the general descriptor of the
// factorisation. Each form's first member, so it is released after everything made with it.
struct Library {
  cusparseHandle_t handle = nullptr;
  cusparseMatDescr_t descr = nullptr;
  explicit Library(const ExecPtr& e)
  {
    BLOCKRES_CUSPARSE_CHECK(cusparseCreate(&handle));
    BLOCKRES_CUSPARSE_CHECK(cusparseSetStream(handle, e->stream()));
    descr = general_descr();
  }
  ~Library()
  {
    if (descr) cusparseDestroyMatDescr(descr);
    if (handle) cusparseDestroy(handle);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
};

// A zeroPivot query's answer as a row: the reported one for CUSPARSE_STATUS_ZERO_PIVOT, -1 for success.
int reported_pivot(cusparseStatus_t st, int pos)
{
  if (st != CUSPARSE_STATUS_SUCCESS && st != CUSPARSE_STATUS_ZERO_PIVOT) BLOCKRES_CUSPARSE_CHECK(st);
  return st == CUSPARSE_STATUS_ZERO_PIVOT ? pos : -1;
}

}  // namespace

struct CusparseIlu0::Impl {
  virtual ~Impl() = default;
  virtual void factor() = 0;
  virtual void solve(kernels::Triangle tri, const double* b, double* x) const = 0;
  virtual int zero_pivot() const = 0;
};

namespace {

struct CsrForm final : CusparseIlu0::Impl {
  static constexpr auto policy = CUSPARSE_SOLVE_POLICY_USE_LEVEL;
  Library lib;
  ExecPtr e;
  index_t n, nnz;
  const index_t* row_ptr;
  const index_t* col;
  double* val;
  csrilu02Info_t info = nullptr;
  cusparseSpMatDescr_t mat_l = nullptr, mat_u = nullptr;
  cusparseSpSVDescr_t sv_l = nullptr, sv_u = nullptr;
  // Vector descriptors whose pointers each solve sets (host-side only, so solves can be recorded).
  cusparseDnVecDescr_t vb = nullptr, vx = nullptr;
  Array<char> ilu_buf, l_buf, u_buf;
  Array<double> vec_buf;

  CsrForm(const ExecPtr& exec, index_t rows, index_t entries, const index_t* rp, const index_t* c, double* v)
      : lib(exec), e(exec), n(rows), nnz(entries), row_ptr(rp), col(c), val(v)
  {
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateCsrilu02Info(&info));
    int bytes = 0;
    BLOCKRES_CUSPARSE_CHECK(cusparseDcsrilu02_bufferSize(lib.handle, n, nnz, lib.descr, val, row_ptr, col, info, &bytes));
    ilu_buf = buffer(e, std::size_t(std::max(bytes, 0)));
    BLOCKRES_CUSPARSE_CHECK(
        cusparseDcsrilu02_analysis(lib.handle, n, nnz, lib.descr, val, row_ptr, col, info, policy, ilu_buf.data()));
    auto make = [&](cusparseSpMatDescr_t& mat, cusparseFillMode_t fill, cusparseDiagType_t diag) {
      BLOCKRES_CUSPARSE_CHECK(cusparseCreateCsr(&mat, n, n, nnz, const_cast<index_t*>(row_ptr),
                                                const_cast<index_t*>(col), val, CUSPARSE_INDEX_32I,
                                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
      BLOCKRES_CUSPARSE_CHECK(cusparseSpMatSetAttribute(mat, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof(fill)));
      BLOCKRES_CUSPARSE_CHECK(cusparseSpMatSetAttribute(mat, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof(diag)));
    };
    make(mat_l, CUSPARSE_FILL_MODE_LOWER, CUSPARSE_DIAG_TYPE_UNIT);
    make(mat_u, CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT);
    // The analysis needs vectors of the right size: two of n doubles, kept as the descriptors' initial
    // pointers (every solve points them at its own b and x).
    vec_buf = Array<double>(e, 2 * size64_t(std::max<index_t>(n, 1)));
    double* tmp = vec_buf.data();
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateDnVec(&vb, n, tmp, CUDA_R_64F));
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateDnVec(&vx, n, tmp + std::max<index_t>(n, 1), CUDA_R_64F));
    const double one = 1.0;
    auto analyse = [&](cusparseSpMatDescr_t mat, cusparseSpSVDescr_t& sv, Array<char>& buf) {
      BLOCKRES_CUSPARSE_CHECK(cusparseSpSV_createDescr(&sv));
      std::size_t b = 0;
      BLOCKRES_CUSPARSE_CHECK(cusparseSpSV_bufferSize(lib.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vb, vx,
                                                      CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, sv, &b));
      buf = buffer(e, b);
      BLOCKRES_CUSPARSE_CHECK(cusparseSpSV_analysis(lib.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vb, vx,
                                                    CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, sv, buf.data()));
    };
    analyse(mat_l, sv_l, l_buf);
    analyse(mat_u, sv_u, u_buf);
    e->synchronize();
  }

  void factor() override
  {
    BLOCKRES_CUSPARSE_CHECK(cusparseDcsrilu02(lib.handle, n, nnz, lib.descr, val, row_ptr, col, info, policy, ilu_buf.data()));
    // The solves' analysis may keep what it read of the values: hand them the new factors.
    BLOCKRES_CUSPARSE_CHECK(cusparseSpSV_updateMatrix(lib.handle, sv_l, val, CUSPARSE_SPSV_UPDATE_GENERAL));
    BLOCKRES_CUSPARSE_CHECK(cusparseSpSV_updateMatrix(lib.handle, sv_u, val, CUSPARSE_SPSV_UPDATE_GENERAL));
  }

  int zero_pivot() const override
  {
    int pos = -1;
    return reported_pivot(cusparseXcsrilu02_zeroPivot(lib.handle, info, &pos), pos);
  }

  void solve(kernels::Triangle tri, const double* b, double* x) const override
  {
    const double one = 1.0;
    const bool lower = tri == kernels::Triangle::unit_lower;
    BLOCKRES_CUSPARSE_CHECK(cusparseDnVecSetValues(vb, const_cast<double*>(b)));
    BLOCKRES_CUSPARSE_CHECK(cusparseDnVecSetValues(vx, x));
    BLOCKRES_CUSPARSE_CHECK(cusparseSpSV_solve(lib.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, lower ? mat_l : mat_u,
                                               vb, vx, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, lower ? sv_l : sv_u));
  }

  ~CsrForm() override
  {
    if (vb) cusparseDestroyDnVec(vb);
    if (vx) cusparseDestroyDnVec(vx);
    if (sv_l) cusparseSpSV_destroyDescr(sv_l);
    if (sv_u) cusparseSpSV_destroyDescr(sv_u);
    if (mat_l) cusparseDestroySpMat(mat_l);
    if (mat_u) cusparseDestroySpMat(mat_u);
    if (info) cusparseDestroyCsrilu02Info(info);
  }
};

struct BsrForm final : CusparseIlu0::Impl {
  static constexpr auto policy = CUSPARSE_SOLVE_POLICY_USE_LEVEL;
  static constexpr auto dir = CUSPARSE_DIRECTION_ROW;  // row-major blocks
  Library lib;
  ExecPtr e;
  index_t nb, nnzb;
  int bs;
  const index_t* row_ptr;
  const index_t* col;
  double* val;
  cusparseMatDescr_t descr_l = nullptr, descr_u = nullptr;
  bsrilu02Info_t info = nullptr;
  bsrsv2Info_t info_l = nullptr, info_u = nullptr;
  Array<char> ilu_buf, l_buf, u_buf;

  BsrForm(const ExecPtr& exec, index_t rows, index_t blocks, int b, const index_t* rp, const index_t* c, double* v)
      : lib(exec), e(exec), nb(rows), nnzb(blocks), bs(b), row_ptr(rp), col(c), val(v)
  {
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateBsrilu02Info(&info));
    int bytes = 0;
    BLOCKRES_CUSPARSE_CHECK(
        cusparseDbsrilu02_bufferSize(lib.handle, dir, nb, nnzb, lib.descr, val, row_ptr, col, bs, info, &bytes));
    ilu_buf = buffer(e, std::size_t(std::max(bytes, 0)));
    BLOCKRES_CUSPARSE_CHECK(
        cusparseDbsrilu02_analysis(lib.handle, dir, nb, nnzb, lib.descr, val, row_ptr, col, bs, info, policy, ilu_buf.data()));
    auto make = [&](cusparseMatDescr_t& d, bsrsv2Info_t& i, cusparseFillMode_t fill, cusparseDiagType_t diag,
                    Array<char>& buf) {
      d = general_descr();
      BLOCKRES_CUSPARSE_CHECK(cusparseSetMatFillMode(d, fill));
      BLOCKRES_CUSPARSE_CHECK(cusparseSetMatDiagType(d, diag));
      BLOCKRES_CUSPARSE_CHECK(cusparseCreateBsrsv2Info(&i));
      int b2 = 0;
      BLOCKRES_CUSPARSE_CHECK(cusparseDbsrsv2_bufferSize(lib.handle, dir, CUSPARSE_OPERATION_NON_TRANSPOSE, nb, nnzb, d, val,
                                                         row_ptr, col, bs, i, &b2));
      buf = buffer(e, std::size_t(std::max(b2, 0)));
      BLOCKRES_CUSPARSE_CHECK(cusparseDbsrsv2_analysis(lib.handle, dir, CUSPARSE_OPERATION_NON_TRANSPOSE, nb, nnzb, d, val,
                                                       row_ptr, col, bs, i, policy, buf.data()));
    };
    make(descr_l, info_l, CUSPARSE_FILL_MODE_LOWER, CUSPARSE_DIAG_TYPE_UNIT, l_buf);
    make(descr_u, info_u, CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT, u_buf);
    e->synchronize();
  }

  void factor() override
  {
    BLOCKRES_CUSPARSE_CHECK(
        cusparseDbsrilu02(lib.handle, dir, nb, nnzb, lib.descr, val, row_ptr, col, bs, info, policy, ilu_buf.data()));
  }

  int zero_pivot() const override
  {
    int pos = -1;
    return reported_pivot(cusparseXbsrilu02_zeroPivot(lib.handle, info, &pos), pos);
  }

  void solve(kernels::Triangle tri, const double* b, double* x) const override
  {
    const double one = 1.0;
    const bool lower = tri == kernels::Triangle::unit_lower;
    BLOCKRES_CUSPARSE_CHECK(cusparseDbsrsv2_solve(lib.handle, dir, CUSPARSE_OPERATION_NON_TRANSPOSE, nb, nnzb, &one,
                                                  lower ? descr_l : descr_u, val, row_ptr, col, bs,
                                                  lower ? info_l : info_u, b, x, policy,
                                                  const_cast<char*>((lower ? l_buf : u_buf).data())));
  }

  ~BsrForm() override
  {
    if (info) cusparseDestroyBsrilu02Info(info);
    if (info_l) cusparseDestroyBsrsv2Info(info_l);
    if (info_u) cusparseDestroyBsrsv2Info(info_u);
    if (descr_l) cusparseDestroyMatDescr(descr_l);
    if (descr_u) cusparseDestroyMatDescr(descr_u);
  }
};


}  // namespace

CusparseIlu0::CusparseIlu0(const ExecPtr& e, Form form, index_t rows, index_t nnz, int bs, const index_t* row_ptr,
                           const index_t* col, double* val)
{
  if (form == Form::bsr) impl_ = std::make_unique<BsrForm>(e, rows, nnz, bs, row_ptr, col, val);
  else impl_ = std::make_unique<CsrForm>(e, rows, nnz, row_ptr, col, val);
}
CusparseIlu0::~CusparseIlu0() = default;
void CusparseIlu0::factor() { impl_->factor(); }
void CusparseIlu0::solve(kernels::Triangle tri, const double* b, double* x) const { impl_->solve(tri, b, x); }
int CusparseIlu0::zero_pivot() const { return impl_->zero_pivot(); }

}  // namespace blockres

#else  // a build without CUDA: nothing can construct one (Ilu0Preconditioner asks for it on CUDA only)

#include <stdexcept>

namespace blockres {
struct CusparseIlu0::Impl {};
CusparseIlu0::CusparseIlu0(const ExecPtr&, Form, index_t, index_t, int, const index_t*, const index_t*, double*)
{
  throw std::logic_error("cuSPARSE ILU(0): this build has no CUDA");
}
CusparseIlu0::~CusparseIlu0() = default;
void CusparseIlu0::factor() {}
void CusparseIlu0::solve(kernels::Triangle, const double*, double*) const {}
int CusparseIlu0::zero_pivot() const { return -1; }
}  // namespace blockres
#endif
