// Dispatch of the vector operations to kernels::cpu or kernels::cuda.
#include "linalg/vector_ops.hpp"

#include "kernels/blas1/blas1.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace blockres {

namespace {
void check_same(const Vector& a, const Vector& b, const char* what)
{
  if (a.size() != b.size()) throw std::invalid_argument(std::string(what) + ": vector sizes differ");
  if (&a.exec() != &b.exec()) throw std::invalid_argument(std::string(what) + ": vectors live on different executors");
}
}  // namespace

#if BLOCKRES_HAVE_CUDA
#define BLOCKRES_DISPATCH(exec, call_cpu, call_cuda) ((exec).is_cuda() ? (call_cuda) : (call_cpu))
#else
#define BLOCKRES_DISPATCH(exec, call_cpu, call_cuda) (call_cpu)
#endif

void fill(Vector& x, double value)
{
  BLOCKRES_DISPATCH(x.exec(), kernels::cpu::fill(x.size(), value, x.data()),
                    kernels::cuda::fill(x.exec().stream(), x.size(), value, x.data()));
}

void copy(const Vector& src, Vector& dst)
{
  check_same(src, dst, "copy");
  dst.copy_from(src);
}

void to_fp32(const Vector& src, Array<float>& dst)
{
  if (src.size() != dst.size()) throw std::invalid_argument("to_fp32: array sizes differ");
  if (&src.exec() != &dst.exec()) throw std::invalid_argument("to_fp32: arrays live on different executors");
  BLOCKRES_DISPATCH(src.exec(), kernels::cpu::to_fp32(src.size(), src.data(), dst.data()),
                    kernels::cuda::to_fp32(src.exec().stream(), src.size(), src.data(), dst.data()));
}

void axpby(double a, const Vector& x, double b, Vector& y)
{
  check_same(x, y, "axpby");
  BLOCKRES_DISPATCH(x.exec(), kernels::cpu::axpby(x.size(), a, x.data(), b, y.data()),
                    kernels::cuda::axpby(x.exec().stream(), x.size(), a, x.data(), b, y.data()));
}

void axpbypcz(double a, const Vector& x, double b, const Vector& y, double c, Vector& z)
{
  check_same(x, y, "axpbypcz");
  check_same(x, z, "axpbypcz");
  BLOCKRES_DISPATCH(x.exec(), kernels::cpu::axpbypcz(x.size(), a, x.data(), b, y.data(), c, z.data()),
                    kernels::cuda::axpbypcz(x.exec().stream(), x.size(), a, x.data(), b, y.data(), c, z.data()));
}

double dot(const Vector& x, const Vector& y)
{
  check_same(x, y, "dot");
  return BLOCKRES_DISPATCH(x.exec(), kernels::cpu::dot(x.size(), x.data(), y.data()),
                           kernels::cuda::dot(x.exec().stream(), x.size(), x.data(), y.data(),
                                              x.exec().reduction_workspace()));
}

double norm2(const Vector& x) { return std::sqrt(dot(x, x)); }

static_assert(kernels::cuda::dots_workspace_doubles(kernels::max_fused_vectors) <=
                  static_cast<size64_t>(Executor::reduction_workspace_doubles),
              "the executor's reduction workspace is too small for kernels::cuda::dots");

// Both fused forms work in chunks of at most kernels::max_fused_vectors vectors.
void dots(const Vector* const* xs, int k, const Vector& y, double* out)
{
  for (int j0 = 0; j0 < k; j0 += kernels::max_fused_vectors) {
    const int m = std::min(k - j0, kernels::max_fused_vectors);
    const double* p[kernels::max_fused_vectors];
    for (int j = 0; j < m; ++j) {
      check_same(*xs[j0 + j], y, "dots");
      p[j] = xs[j0 + j]->data();
    }
    BLOCKRES_DISPATCH(y.exec(), kernels::cpu::dots(y.size(), m, p, y.data(), out + j0),
                      kernels::cuda::dots(y.exec().stream(), y.size(), m, p, y.data(), out + j0,
                                          y.exec().reduction_workspace()));
  }
}

void multi_axpby(const Vector* const* xs, const double* a, int k, double b, Vector& y)
{
  if (k == 0 && b == 1.0) return;
  for (int j0 = 0; j0 == 0 || j0 < k; j0 += kernels::max_fused_vectors) {  // k == 0: y = b y
    const int m = std::min(k - j0, kernels::max_fused_vectors);
    const double* p[kernels::max_fused_vectors];
    for (int j = 0; j < m; ++j) {
      check_same(*xs[j0 + j], y, "multi_axpby");
      if (xs[j0 + j] == &y) throw std::invalid_argument("multi_axpby: y must not be one of the summed vectors");
      p[j] = xs[j0 + j]->data();
    }
    const double bj = j0 == 0 ? b : 1.0;  // later chunks add to the partial sum
    BLOCKRES_DISPATCH(y.exec(), kernels::cpu::multi_axpby(y.size(), m, a + j0, p, bj, y.data()),
                      kernels::cuda::multi_axpby(y.exec().stream(), y.size(), m, a + j0, p, bj, y.data()));
  }
}

double axpby_norm2(double a, const Vector& x, double b, Vector& y)
{
  check_same(x, y, "axpby_norm2");
  return BLOCKRES_DISPATCH(x.exec(), kernels::cpu::axpby_norm2(x.size(), a, x.data(), b, y.data()),
                           kernels::cuda::axpby_norm2(x.exec().stream(), x.size(), a, x.data(), b, y.data(),
                                                      x.exec().reduction_workspace()));
}

double cg_update(double alpha, const Vector& p, const Vector& q, Vector& x, Vector& r)
{
  check_same(p, q, "cg_update");
  check_same(p, x, "cg_update");
  check_same(p, r, "cg_update");
  return BLOCKRES_DISPATCH(p.exec(), kernels::cpu::cg_update(p.size(), alpha, p.data(), q.data(), x.data(), r.data()),
                           kernels::cuda::cg_update(p.exec().stream(), p.size(), alpha, p.data(), q.data(), x.data(),
                                                    r.data(), p.exec().reduction_workspace()));
}

void bicgstab_update(double alpha, const Vector& ph, double omega, const Vector& sh, const Vector& s, const Vector& t,
                     const Vector& rh, Vector& x, Vector& r, double* out)
{
  for (const Vector* v : {&sh, &s, &t, &rh, static_cast<const Vector*>(&x)}) check_same(ph, *v, "bicgstab_update");
  check_same(ph, r, "bicgstab_update");
  if (&ph == &x || &ph == &r || &sh == &x || &s == &x || &t == &x || &t == &r || &rh == &x || &rh == &r)
    throw std::invalid_argument("bicgstab_update: only s and sh may alias r");
  BLOCKRES_DISPATCH(ph.exec(),
                    kernels::cpu::bicgstab_update(ph.size(), alpha, ph.data(), omega, sh.data(), s.data(), t.data(),
                                                  rh.data(), x.data(), r.data(), out),
                    kernels::cuda::bicgstab_update(ph.exec().stream(), ph.size(), alpha, ph.data(), omega, sh.data(),
                                                   s.data(), t.data(), rh.data(), x.data(), r.data(), out,
                                                   ph.exec().reduction_workspace()));
}

MultiVector::MultiVector(ExecPtr exec, size64_t n, int k) : n_(n), data_(exec, n * k)
{
  cols_.reserve(static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) cols_.push_back(Vector::view(exec, data_.data() + j * n, n));
}

void MultiVector::grow(int k)
{
  if (k <= cols()) return;
  const ExecPtr exec = data_.exec_ptr();
  Array<double> more(exec, n_ * k);
  if (n_ > 0 && cols() > 0) exec->copy(more.data(), data_.data(), std::size_t(n_) * std::size_t(cols()) * sizeof(double));
  data_ = std::move(more);
  cols_.clear();
  cols_.reserve(static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) cols_.push_back(Vector::view(exec, data_.data() + j * n_, n_));
}

namespace {
void check_gemv(const MultiVector& V, int k, const Vector& v, const char* what)
{
  if (k < 0 || k > V.cols()) throw std::invalid_argument(std::string(what) + ": column count out of range");
  if (v.size() != V.rows()) throw std::invalid_argument(std::string(what) + ": vector size differs from the rows");
  if (&v.exec() != &V.exec()) throw std::invalid_argument(std::string(what) + ": different executors");
}
}  // namespace

static_assert(kernels::cuda::dots_workspace_doubles(32) <= static_cast<size64_t>(Executor::reduction_workspace_doubles),
              "the executor's reduction workspace is too small for kernels::cuda::gemv_t_own");

void gemv_t(const MultiVector& V, int k, const Vector& w, double* h, GemvKernel kernel)
{
  check_gemv(V, k, w, "gemv_t");
  if (k == 0) return;
  if (kernel == GemvKernel::own && w.exec().is_cuda()) {
    for (int j0 = 0; j0 < k; j0 += 32)
      BLOCKRES_DISPATCH(w.exec(), (void)0,
                        kernels::cuda::gemv_t_own(w.exec().stream(), V.rows(), std::min(32, k - j0),
                                                  V.data() + j0 * V.rows(), w.data(), h + j0,
                                                  w.exec().reduction_workspace()));
    return;
  }
  BLOCKRES_DISPATCH(w.exec(), kernels::cpu::gemv_t(V.rows(), k, V.data(), w.data(), h),
                    kernels::cuda::gemv_t(w.exec().blas_handle(), V.rows(), k, V.data(), w.data(), h));
}

void gemv_n(double a, const MultiVector& V, int k, const double* h, double b, Vector& y, GemvKernel kernel)
{
  check_gemv(V, k, y, "gemv_n");
  if (kernel == GemvKernel::own && y.exec().is_cuda() && k > 0) {
    for (int j0 = 0; j0 < k; j0 += 32)
      BLOCKRES_DISPATCH(y.exec(), (void)0,
                        kernels::cuda::gemv_n_own(y.exec().stream(), V.rows(), std::min(32, k - j0), a,
                                                  V.data() + j0 * V.rows(), h + j0, j0 == 0 ? b : 1.0, y.data()));
    return;
  }
  if (k == 0) {
    if (b == 0.0)
      fill(y, 0.0);
    else if (b != 1.0)
      axpby(b, y, 0.0, y);
    return;
  }
  BLOCKRES_DISPATCH(y.exec(), kernels::cpu::gemv_n(V.rows(), k, a, V.data(), h, b, y.data()),
                    kernels::cuda::gemv_n(y.exec().blas_handle(), V.rows(), k, a, V.data(), h, b, y.data()));
}

static_assert(kernels::cuda::cgs2_workspace_doubles <= static_cast<size64_t>(Executor::reduction_workspace_doubles),
              "the executor's reduction workspace is too small for kernels::cuda::cgs2");

static_assert(cgs2_fused_max_cols == kernels::cuda::cgs2_max_cols, "cgs2's column limit, stated twice");

bool cgs2_is_fused(const Executor& e, int k, GemvKernel kernel)
{
  return e.is_cuda() && kernel == GemvKernel::fused && k >= 1 && k <= cgs2_fused_max_cols;
}

namespace {
void cgs2_impl(const MultiVector& V, int k, Vector& w, double* h1, double* h2, double* nrm2, GemvKernel kernel,
               const std::function<void(double*, int)>* between)
{
  check_gemv(V, k, w, "cgs2");
  if (k > 0 && w.data() < V.data() + size64_t(k) * V.rows() && V.data() < w.data() + w.size())
    throw std::invalid_argument("cgs2: w is one of the columns it is orthogonalised against");
  auto hand = [&](double* v, int count) {
    if (between) (*between)(v, count);
  };
  if (k == 0) {
    dot_to(w, w, nrm2);
    hand(nrm2, 1);
    return;
  }
  if (!w.exec().is_cuda() && !between) {
    kernels::cpu::cgs2(V.rows(), k, V.data(), w.data(), h1, h2, nrm2);
    return;
  }
  if (cgs2_is_fused(w.exec(), k, kernel)) {
    BLOCKRES_DISPATCH(w.exec(), (void)0,
                      between ? kernels::cuda::cgs2(w.exec().stream(), V.rows(), k, V.data(), w.data(), h1, h2, nrm2,
                                                    w.exec().reduction_workspace(), w.exec().reduction_tickets(),
                                                    *between)
                              : kernels::cuda::cgs2(w.exec().stream(), V.rows(), k, V.data(), w.data(), h1, h2, nrm2,
                                                    w.exec().reduction_workspace(), w.exec().reduction_tickets()));
    return;
  }
  const GemvKernel gk = kernel == GemvKernel::own ? GemvKernel::own : GemvKernel::cublas;
  gemv_t(V, k, w, h1, gk);
  hand(h1, k);
  gemv_n(-1.0, V, k, h1, 1.0, w, gk);
  gemv_t(V, k, w, h2, gk);
  hand(h2, k);
  gemv_n(-1.0, V, k, h2, 1.0, w, gk);
  dot_to(w, w, nrm2);
  hand(nrm2, 1);
}
}  // namespace

void cgs2(const MultiVector& V, int k, Vector& w, double* h1, double* h2, double* nrm2, GemvKernel kernel)
{
  cgs2_impl(V, k, w, h1, h2, nrm2, kernel, nullptr);
}

void cgs2(const MultiVector& V, int k, Vector& w, double* h1, double* h2, double* nrm2, GemvKernel kernel,
          const std::function<void(double*, int)>& between)
{
  cgs2_impl(V, k, w, h1, h2, nrm2, kernel, &between);
}

void gemm_t(const MultiVector& V, int k, int col, int m, double* out)
{
  if (k < 0 || m < 0 || col < 0 || k > V.cols() || col + m > V.cols())
    throw std::invalid_argument("gemm_t: column range out of the basis");
  if (k == 0 || m == 0) return;
  const double* X = V.data() + size64_t(col) * V.rows();
  BLOCKRES_DISPATCH(V.exec(), kernels::cpu::gemm_t(V.rows(), k, V.data(), m, X, out),
                    kernels::cuda::gemm_t(V.exec().blas_handle(), V.rows(), k, V.data(), m, X, out));
}

void gemm_n(double a, MultiVector& V, int k, const double* C, double b, int col, int m)
{
  if (k < 0 || m < 0 || col < k || col + m > V.cols())
    throw std::invalid_argument("gemm_n: column range out of the basis or overlapping the columns read");
  if (m == 0) return;
  double* Y = V.data() + size64_t(col) * V.rows();
  const double* Vr = V.data();
  if (k == 0) {
    for (int c = 0; c < m; ++c) axpby(b, V.col(col + c), 0.0, V.col(col + c));
    return;
  }
  BLOCKRES_DISPATCH(V.exec(), kernels::cpu::gemm_n(V.rows(), k, m, a, Vr, C, b, Y),
                    kernels::cuda::gemm_n(V.exec().blas_handle(), V.rows(), k, m, a, Vr, C, b, Y));
}

void dot_to(const Vector& x, const Vector& y, double* result)
{
  check_same(x, y, "dot_to");
  BLOCKRES_DISPATCH(x.exec(), (void)(*result = kernels::cpu::dot(x.size(), x.data(), y.data())),
                    kernels::cuda::dot_to_device(x.exec().stream(), x.size(), x.data(), y.data(), result,
                                                 x.exec().reduction_workspace()));
}

}  // namespace blockres
