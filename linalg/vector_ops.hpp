// Vector operations on Arrays, dispatched to the CPU or CUDA kernels by the array's executor.
#pragma once

#include "linalg/array.hpp"

#include <functional>
#include <vector>

namespace blockres {

using Vector = Array<double>;

void fill(Vector& x, double value);
void copy(const Vector& src, Vector& dst);
void axpby(double a, const Vector& x, double b, Vector& y);                            // y = a x + b y
void axpbypcz(double a, const Vector& x, double b, const Vector& y, double c, Vector& z); // z = a x + b y + c z
double dot(const Vector& x, const Vector& y);
double norm2(const Vector& x);
// dst = src rounded to fp32 (saturating to +-inf beyond its range), on their executor: the fp32
// copies of mixed-precision preconditioners (issue 30). Same size and executor.
void to_fp32(const Vector& src, Array<float>& dst);
// Fused forms over k vectors (any k >= 0; one pass over the data per 16 vectors). xs points
// to k vectors of y's size and executor; the results and coefficients are host arrays.
void dots(const Vector* const* xs, int k, const Vector& y, double* out);                 // out[j] = xs[j] . y
void multi_axpby(const Vector* const* xs, const double* a, int k, double b, Vector& y);  // y = b y + sum_j a[j] xs[j]

// Fused Krylov updates (kernels/blas1/blas1.hpp), one pass each, reductions returned to the host:
double axpby_norm2(double a, const Vector& x, double b, Vector& y);  // y = a x + b y; returns ||y||^2
// x += alpha p; r -= alpha q; returns ||r||^2
double cg_update(double alpha, const Vector& p, const Vector& q, Vector& x, Vector& r);
// x += alpha ph + omega sh; r = s - omega t; out = {||r||^2, rh . r}. s and sh may be r itself.
void bicgstab_update(double alpha, const Vector& ph, double omega, const Vector& sh, const Vector& s, const Vector& t,
                     const Vector& rh, Vector& x, Vector& r, double* out);

// n x k column-major block of vectors in one allocation (the GMRES bases), so that Gram–Schmidt
// runs as GEMVs (cuBLAS on the device); col(j) is a Vector view of column j.
class MultiVector {
 public:
  MultiVector(ExecPtr exec, size64_t n, int k);
  // k columns from now on (k > cols(): the existing columns keep their values, the new ones are unset; the data
  // moves, so views and references of columns taken before are invalid). k <= cols(): nothing changes.
  void grow(int k);
  size64_t rows() const { return n_; }
  int cols() const { return static_cast<int>(cols_.size()); }
  Vector& col(int j) { return cols_[static_cast<std::size_t>(j)]; }
  const Vector& col(int j) const { return cols_[static_cast<std::size_t>(j)]; }
  const double* data() const { return data_.data(); }
  double* data() { return data_.data(); }
  const Executor& exec() const { return data_.exec(); }

 private:
  size64_t n_;
  Array<double> data_;
  std::vector<Vector> cols_;
};

// Which GEMV runs on the device: cuBLAS (cublasDgemv) or the own one-pass tall-skinny kernels
// (kernels/blas1/blas1.hpp); `fused` is cuBLAS for single products and the three-pass
// kernels::cuda::cgs2 for a Gram–Schmidt step (cgs2 below). The CPU backend has one implementation.
enum class GemvKernel { cublas, own, fused };
// h[j] = V(:, j) . w for j < k, into h in the executor's memory (k doubles); asynchronous.
void gemv_t(const MultiVector& V, int k, const Vector& w, double* h, GemvKernel kernel = GemvKernel::cublas);
// y = a V(:, 0:k) h + b y with h in the executor's memory; b == 0: y is not read.
void gemv_n(double a, const MultiVector& V, int k, const double* h, double b, Vector& y,
            GemvKernel kernel = GemvKernel::cublas);
// Two-column forms for GMRES's delayed reorthogonalisation (KrylovConfig::orthogonalization =
// dcgs2), V read once for all m columns: out (k x m, leading dimension k, executor memory) =
// V(:, 0:k)^T V(:, col:col + m); and V(:, col:col + m) = a V(:, 0:k) C + b V(:, col:col + m) with C
// k x m in executor memory (col >= k: the columns written are not read as V(:, 0:k)).
void gemm_t(const MultiVector& V, int k, int col, int m, double* out);
void gemm_n(double a, MultiVector& V, int k, const double* C, double b, int col, int m);
// One step of classical Gram–Schmidt applied twice against V(:, 0:k) (kernels::cpu::cgs2):
// h1 = V^T w; w -= V h1; h2 = V^T w; w -= V h2; nrm2 = w.w, with h1, h2 (k each) and nrm2 in the
// executor's memory; asynchronous. w must not be one of V's first k columns. On CUDA, `fused` runs
// kernels::cuda::cgs2 (k <= 32; more columns take the cuBLAS sequence), `cublas` and `own` the five
// products one by one with those GEMVs.
void cgs2(const MultiVector& V, int k, Vector& w, double* h1, double* h2, double* nrm2, GemvKernel kernel);
// The same with between(sums, count) called once h1 (k), h2 (k) and nrm2 (1) are each queued, before they are
// used: a basis whose rows are split over ranks sums them over the ranks there (Krylov's distributed CGS2).
void cgs2(const MultiVector& V, int k, Vector& w, double* h1, double* h2, double* nrm2, GemvKernel kernel,
          const std::function<void(double*, int)>& between);
// Whether cgs2 runs the three fused passes (3k + 5 vector passes) rather than the five products
// (4k + 7) on this executor: CUDA, GemvKernel::fused and 1 <= k <= cgs2_fused_max_cols.
inline constexpr int cgs2_fused_max_cols = 32;
bool cgs2_is_fused(const Executor& e, int k, GemvKernel kernel);
// result[0] = x . y into the executor's memory, without synchronising (CUDA).
void dot_to(const Vector& x, const Vector& y, double* result);

}  // namespace blockres
