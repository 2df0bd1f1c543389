// AMG backend operations on the CPU: the reference kernels of amg_kernels_cpu.cpp on host memory.
#include "linalg/preconditioners/amg/amg_ops.hpp"

#include "kernels/batched/batched_lu.hpp"
#include "kernels/blas1/blas1.hpp"
#include "kernels/ilu_isai/ilu.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <span>

namespace blockres::amg {

namespace {

template <class T>
Array<T> host_array(const ExecPtr& e, const std::vector<T>& v)
{
  return Array<T>(e, std::span<const T>(v));
}

// A pattern and values computed on the host into an executor matrix (CPU: the same memory kind).
void store(const ExecPtr& e, const Csr& C, Matrix& M)
{
  M.nrows = C.nrows;
  M.ncols = C.ncols;
  M.row_ptr = host_array(e, C.row_ptr);
  M.col_ind = host_array(e, C.col_ind);
  M.values = C.values.size() == C.col_ind.size() ? host_array(e, C.values)
                                                  : Array<double>(e, static_cast<size64_t>(C.col_ind.size()));
}

// The ILU(0) smoother of a level: A's pattern with sorted rows (col, the gather map perm), its
// schedule, the factors and 1 / u_ii, and the Jacobi sweeps' work vectors.
struct IluPlan final : Plan {
  int sweeps = 0;
  kernels::IluSchedule sched;
  std::vector<index_t> col, perm;
  std::vector<double> lu, dinv;
  mutable std::vector<double> w1, w2;
};

struct TransposePlan final : Plan {
  std::vector<index_t> map;
};

class CpuOps final : public Ops {
 public:
  explicit CpuOps(ExecPtr e) : e_(std::move(e)) {}

  void strength_graph(const CsrRef& A, index_t n_local, double theta, Matrix& G) override
  {
    Csr g;
    cpu::strength_graph(A, n_local, theta, g);
    store(e_, g, G);
  }
  index_t handshake_match(const Matrix& G, Array<index_t>& agg) override
  {
    agg = Array<index_t>(e_, G.nrows);
    return cpu::handshake_match(G.ref(), agg.data());
  }
  index_t mis2_aggregate(const Matrix& G, Array<index_t>& agg) override
  {
    agg = Array<index_t>(e_, G.nrows);
    return cpu::mis2_aggregate(G.ref(), agg.data());
  }
  void coarse_graph(const Matrix& G, const Array<index_t>& agg, index_t nc, Matrix& Gc) override
  {
    Csr g;
    cpu::coarse_graph(G.ref(), agg.data(), nc, g);
    store(e_, g, Gc);
  }
  void compose(Array<index_t>& agg, const Array<index_t>& pass_agg) override
  {
    index_t* a = agg.data();
    const index_t* p = pass_agg.data();
    const size64_t n = agg.size();
#pragma omp parallel for schedule(static)
    for (size64_t i = 0; i < n; ++i)
      if (a[i] >= 0) a[i] = p[a[i]];
  }
  void tentative_prolongation(const Array<index_t>& agg, index_t nc, Matrix& P) override
  {
    Csr p;
    cpu::tentative_prolongation(agg.data(), static_cast<index_t>(agg.size()), nc, p);
    store(e_, p, P);
  }
  std::unique_ptr<Plan> product_symbolic(const CsrRef& A, const CsrRef& B, Matrix& C) override
  {
    Csr c;
    cpu::spgemm_symbolic(A, B, c);
    store(e_, c, C);
    return std::make_unique<Plan>();
  }
  void product_numeric(Plan&, const CsrRef& A, const CsrRef& B, Matrix& C) override
  {
    cpu::spgemm_numeric(A, B, C.ref(), C.values.data());
  }
  std::unique_ptr<Plan> transpose_symbolic(const Matrix& P, Matrix& R) override
  {
    auto plan = std::make_unique<TransposePlan>();
    Csr r;
    cpu::transpose_symbolic(P.ref(), r, plan->map);
    store(e_, r, R);
    return plan;
  }
  void transpose_numeric(Plan& plan, const Matrix& P, Matrix& R) override
  {
    const auto& map = static_cast<TransposePlan&>(plan).map;
    cpu::transpose_numeric(P.values.data(), map.data(), static_cast<index_t>(map.size()), R.values.data());
  }
  bool same_structure(const Array<index_t>& row_ptr, const Array<index_t>& col_ind, const CsrRef& A) override
  {
    const std::size_t n = static_cast<std::size_t>(A.nrows) + 1, nnz = static_cast<std::size_t>(A.nnz());
    return static_cast<std::size_t>(row_ptr.size()) == n && static_cast<std::size_t>(col_ind.size()) == nnz &&
           std::memcmp(row_ptr.data(), A.row_ptr, n * sizeof(index_t)) == 0 &&
           (nnz == 0 || std::memcmp(col_ind.data(), A.col_ind, nnz * sizeof(index_t)) == 0);
  }

  double jacobi_radius_bound(const CsrRef& A) override { return cpu::jacobi_radius_bound(A); }
  void smoothed_prolongation(const CsrRef& A, const Array<index_t>& agg, double omega, Matrix& P) override
  {
    cpu::smoothed_prolongation(A, agg.data(), omega, P.ref(), P.values.data());
  }
  index_t jacobi_scaling(const CsrRef& A, double omega, bool l1, Array<double>& dinv) override
  {
    if (dinv.size() != A.nrows) dinv = Array<double>(e_, A.nrows);
    return cpu::jacobi_scaling(A, omega, l1, dinv.data());
  }
  void jacobi_radius_bound_into(const CsrRef& A, double* rho) override { *rho = cpu::jacobi_radius_bound(A); }
  void smoothed_prolongation_from(const CsrRef& A, const Array<index_t>& agg, const double* rho, Matrix& P) override
  {
    const double omega = *rho > 0.0 ? 4.0 / (3.0 * *rho) : 0.0;
    cpu::smoothed_prolongation(A, agg.data(), omega, P.ref(), P.values.data());
  }
  void jacobi_scaling_into(const CsrRef& A, double omega, bool l1, Array<double>& dinv, index_t* first_bad) override
  {
    const index_t bad = jacobi_scaling(A, omega, l1, dinv);
    *first_bad = bad ? bad - 1 : INT_MAX;
  }
  void coarse_factor_into(const CsrRef& A, Array<double>& lu, Array<index_t>& piv, Array<double>& inv,
                          index_t* info) override
  {
    *info = coarse_factor(A, lu, piv, inv);
  }
  int coarse_factor(const CsrRef& A, Array<double>& lu, Array<index_t>& piv, Array<double>& inv) override
  {
    inv = Array<double>();  // the substitutions (see amg_ops.hpp)
    const index_t n = A.nrows;
    if (lu.size() != size64_t(n) * n) lu = Array<double>(e_, size64_t(n) * n);
    if (piv.size() != n) piv = Array<index_t>(e_, n);
    double* d = lu.data();
    std::fill(d, d + size64_t(n) * n, 0.0);
    for (index_t i = 0; i < n; ++i)
      for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) d[size64_t(i) * n + A.col_ind[p]] += A.values[p];
    kernels::BatchLayout layout;
    layout.count = 1;
    layout.uniform = layout.max_size = n;
    int info = 0;
    kernels::cpu::lu_factor(layout, d, piv.data(), &info);
    return info;
  }

  std::unique_ptr<Plan> ilu_symbolic(const CsrRef& A, int trisolve_sweeps) override
  {
    auto p = std::make_unique<IluPlan>();
    p->sweeps = trisolve_sweeps;
    cpu::sorted_pattern(A, p->col, p->perm);
    p->sched = kernels::ilu_schedule(A.nrows, A.row_ptr, p->col.data());
    p->lu.resize(p->col.size());
    p->dinv.resize(static_cast<std::size_t>(A.nrows));
    p->w1.resize(static_cast<std::size_t>(A.nrows));
    p->w2.resize(static_cast<std::size_t>(A.nrows));
    return p;
  }
  void ilu_factor_into(Plan& plan, const CsrRef& A, index_t* info) override
  {
    auto& p = static_cast<IluPlan&>(plan);
    for (std::size_t q = 0; q < p.perm.size(); ++q) p.lu[q] = A.values[p.perm[q]];
    // The scalar ILU(0) kernels: the same factors as the block ones with 1 x 1 blocks (the CUDA
    // twin's), to rounding (a division by u_ii where those multiply by 1 / u_ii), at a third of
    // their time on the CPU.
    *info = kernels::cpu::ilu0_factor(p.sched, {A.nrows, A.row_ptr, p.col.data(), p.lu.data()});
    for (index_t i = 0; i < A.nrows; ++i) p.dinv[i] = 1.0 / p.lu[p.sched.diag[i]];
  }
  void ilu_sweep(const Plan& plan, const CsrRef& A, const double* b, const double* x_in, double* x_out,
                 double* work) override
  {
    const auto& p = static_cast<const IluPlan&>(plan);
    const kernels::CsrView<const double> LU{A.nrows, A.row_ptr, p.col.data(), p.lu.data()};
    const CsrRef lu{A.nrows, A.ncols, A.row_ptr, p.col.data(), p.lu.data(), A.nnz()};
    const size64_t n = A.nrows;
    ilu_smoother_apply(
        p.sweeps, b, x_in, x_out, work, p.w1.data(), p.w2.data(), [&](double* r) { cpu::residual(A, b, x_in, r); },
        [&](const double* rhs, double* y) { kernels::cpu::ilu0_lower_solve(p.sched, LU, rhs, y); },
        [&](const double* c, double* u) { kernels::cpu::ilu0_upper_solve(p.sched, LU, c, u); },
        [&](bool upper, const double* rhs, const double* x, double* y) {
          cpu::ilu_jacobi_sweep(lu, p.dinv.data(), upper, rhs, x, y);
        },
        [&](const double* x, const double* u, double* out) { kernels::cpu::axpbypcz(n, 1.0, x, 1.0, u, 0.0, out); });
  }

  void coarse_solve(index_t n, const Array<double>& lu, const Array<index_t>& piv, const Array<double>& /*inv*/,
                    const double* b, double* x) override
  {
    kernels::BatchLayout layout;
    layout.count = 1;
    layout.uniform = layout.max_size = n;
    kernels::cpu::lu_solve(layout, lu.data(), piv.data(), b, x);
  }
  void spmv(const CycleRef& M, double alpha, const double* x, double beta, double* y) override
  {
    M.visit([&](const auto& A) { cpu::spmv(A, alpha, x, beta, y); });
  }
  void jacobi_sweep(const CycleRef& M, const double* dinv, const double* b, const double* x_in, double* x_out) override
  {
    M.visit([&](const auto& A) { cpu::jacobi_sweep(A, dinv, b, x_in, x_out); });
  }
  void residual(const CycleRef& M, const double* b, const double* x, double* r) override
  {
    M.visit([&](const auto& A) { cpu::residual(A, b, x, r); });
  }
  void smooth_zero_residual(const CycleRef& M, const double* dinv, const double* b, double* x, double* r) override
  {
    M.visit([&](const auto& A) { cpu::smooth_zero_residual(A, dinv, b, x, r); });
  }
  void to_fp32(size64_t n, const double* in, float* out) override { kernels::cpu::to_fp32(n, in, out); }

 private:
  ExecPtr e_;
};

}  // namespace

std::unique_ptr<Ops> Ops::create(const ExecPtr& exec)
{
#if BLOCKRES_HAVE_CUDA
  if (exec->is_cuda()) return make_cuda_ops(exec);
#endif
  return std::make_unique<CpuOps>(exec);
}

}  // namespace blockres::amg
