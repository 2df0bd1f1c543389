// Dispatch of the vector operations to kernels::cpu or kernels::cuda.
#include "linalg/vector_ops.hpp"

#include "kernels/blas1.hpp"

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

}  // namespace blockres
