// Dispatch of the vector operations to kernels::cpu or kernels::cuda.
#include "linalg/vector_ops.hpp"

#include "kernels/blas1.hpp"

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

}  // namespace blockres
