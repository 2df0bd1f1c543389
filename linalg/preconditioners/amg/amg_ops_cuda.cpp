// AMG backend operations on a CUDA device: the kernels of amg_kernels_cuda.cu on executor arrays,
// cuSPARSE SpGEMM (reuse API: symbolic once per structure, numeric every setup) for A P0, A P and
// R (A P), cuSPARSE csr2csc for R = P^T, and our batched LU for the coarsest level.
#include "kernels/amg/amg_kernels_cuda.hpp"
#include "linalg/preconditioners/amg/amg_ops.hpp"

#include "kernels/batched/batched_lu.hpp"
#include "kernels/blas1/blas1.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/ilu_isai/ilu_block.hpp"
#include "linalg/allocation.hpp"
#include "linalg/stream_graph.hpp"

#include <cusparse.h>

#include <algorithm>
#include <climits>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

namespace blockres::amg {

namespace {

cusparseSpMatDescr_t make_csr(const CsrRef& A)
{
  cusparseSpMatDescr_t d = nullptr;
  BLOCKRES_CUSPARSE_CHECK(cusparseCreateCsr(&d, A.nrows, A.ncols, A.nnz(), const_cast<index_t*>(A.row_ptr),
                                            const_cast<index_t*>(A.col_ind), const_cast<double*>(A.values),
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                            CUDA_R_64F));
  return d;
}

struct SpgemmPlan final : Plan {
  cusparseSpMatDescr_t a = nullptr, b = nullptr, c = nullptr;
  cusparseSpGEMMDescr_t desc = nullptr;
  Array<char> buf4, buf5;  // kept for the numeric phase
  bool empty = false;      // A or B without entries: C is the empty pattern
  cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_DEFAULT;
  ~SpgemmPlan() override
  {
    if (desc) cusparseSpGEMM_destroyDescr(desc);
    if (a) cusparseDestroySpMat(a);
    if (b) cusparseDestroySpMat(b);
    if (c) cusparseDestroySpMat(c);
  }
};

// R = P^T: csr2csc once on the entry numbers gives the map R.values[k] = P.values[map[k]]; the
// numeric transposes are that gather (a permutation: the bits csr2csc would give).
struct TransposePlan final : Plan {
  Array<index_t> map;
};

// The ILU(0) smoother of a level (amg_ops_cpu.cpp's IluPlan on the device): the host schedule
// and, in device memory, the sorted pattern's columns, the gather map, the schedule's rows, the
// factors, 1 / u_ii and the Jacobi sweeps' work vectors.
struct IluPlan final : Plan {
  int sweeps = 0;
  kernels::IluSchedule sched;
  Array<index_t> col, perm, diag, lower_rows, upper_rows;
  Array<double> lu, dinv;
  mutable Array<double> w1, w2;
  kernels::cuda::IluDeviceSchedule device() const
  {
    return {&sched, diag.data(), lower_rows.data(), upper_rows.data()};
  }
};

// Deterministic: the same bits on every run on one GPU (the cuSPARSE header spells it so).
constexpr cusparseSpGEMMAlg_t spgemm_alg = CUSPARSE_SPGEMM_CSR_ALG_DETERMINITIC;

class CudaOps final : public Ops {
 public:
  explicit CudaOps(ExecPtr e) : e_(std::move(e)), s_(e_->stream()), scalar_(e_, 1)
  {
    BLOCKRES_CUSPARSE_CHECK(cusparseCreate(&h_));
    BLOCKRES_CUSPARSE_CHECK(cusparseSetStream(h_, s_));
  }
  ~CudaOps() override { cusparseDestroy(h_); }

  // Inside another recording (a caller's StreamGraph: the whole CPR application) the work is
  // recorded there as plain launches: no graph of its own.
  bool record(Graph g, const std::function<void()>& body) override
  {
    return !StreamGraph::capturing(*e_) && slot(g).record(body);
  }
  bool replay(Graph g) override
  {
    if (!slot(g).ready() || StreamGraph::capturing(*e_)) return false;
    slot(g).replay();
    return true;
  }
  void drop_graph(Graph g) override { slot(g).reset(); }

  // Sorted-or-not (key, value) edges -> CSR, the values of equal keys reduced in emission order.
  void build_csr(Array<std::uint64_t>& keys, Array<double>& vals, size64_t m, index_t nrows, index_t ncols, bool max,
                 Matrix& M)
  {
    M.nrows = nrows;
    M.ncols = ncols;
    M.row_ptr = Array<index_t>(e_, size64_t(nrows) + 1);
    Array<index_t> head(e_, m), seg(e_, m);
    const index_t nnz = cuda::sort_segments(s_, m, keys.data(), vals.data(), head.data(), seg.data());
    M.col_ind = Array<index_t>(e_, nnz);
    M.values = Array<double>(e_, nnz);
    Array<std::uint64_t> ukeys(e_, nnz);
    cuda::segment_reduce(s_, m, keys.data(), vals.data(), head.data(), seg.data(), ncols, max, M.col_ind.data(),
                         M.values.data(), ukeys.data());
    cuda::rows_from_keys(s_, ukeys.data(), nnz, nrows, ncols, M.row_ptr.data());
  }

  void strength_graph(const CsrRef& A, index_t n_local, double theta, Matrix& G) override
  {
    Array<double> d(e_, A.nrows);
    Array<size64_t> off(e_, size64_t(A.nrows) + 1);
    const size64_t m = cuda::strength_count(s_, A, n_local, theta, d.data(), off.data());
    Array<std::uint64_t> keys(e_, m);
    Array<double> vals(e_, m);
    if (m > 0) cuda::strength_emit(s_, A, n_local, theta, d.data(), off.data(), keys.data(), vals.data());
    build_csr(keys, vals, m, A.nrows, A.nrows, true, G);
  }

  index_t handshake_match(const Matrix& G, Array<index_t>& agg) override
  {
    const index_t n = G.nrows;
    agg = Array<index_t>(e_, n);
    if (n == 0) return 0;
    Array<index_t> mate(e_, n), choice(e_, n), root(e_, n), number(e_, size64_t(n) + 1);
    cuda::fill(s_, n, -1, mate.data());
    for (int round = 0; round < max_match_rounds; ++round)
      if (cuda::match_round(s_, G.ref(), mate.data(), choice.data(), scalar_.data()) == 0) break;
    return cuda::match_finish(s_, G.ref(), mate.data(), root.data(), number.data(), agg.data());
  }

  index_t mis2_aggregate(const Matrix& G, Array<index_t>& agg) override
  {
    const index_t n = G.nrows;
    agg = Array<index_t>(e_, n);
    if (n == 0) return 0;
    Array<signed char> state(e_, n);
    Array<index_t> m1(e_, n), m2(e_, n), number(e_, size64_t(n) + 1), first(e_, n);
    cuda::mis_init(s_, G.ref(), state.data());
    while (cuda::mis_round(s_, G.ref(), state.data(), m1.data(), m2.data(), scalar_.data()) > 0) {
    }
    return cuda::mis_finish(s_, G.ref(), state.data(), number.data(), first.data(), agg.data());
  }

  void coarse_graph(const Matrix& G, const Array<index_t>& agg, index_t nc, Matrix& Gc) override
  {
    Array<size64_t> off(e_, size64_t(G.nrows) + 1);
    const size64_t m = cuda::coarse_count(s_, G.ref(), agg.data(), off.data());
    Array<std::uint64_t> keys(e_, m);
    Array<double> vals(e_, m);
    if (m > 0) cuda::coarse_emit(s_, G.ref(), agg.data(), nc, off.data(), keys.data(), vals.data());
    build_csr(keys, vals, m, nc, nc, false, Gc);
  }

  void compose(Array<index_t>& agg, const Array<index_t>& pass_agg) override
  {
    cuda::compose(s_, static_cast<index_t>(agg.size()), agg.data(), pass_agg.data());
  }

  void tentative_prolongation(const Array<index_t>& agg, index_t nc, Matrix& P) override
  {
    const index_t n = static_cast<index_t>(agg.size());
    P.nrows = n;
    P.ncols = nc;
    P.row_ptr = Array<index_t>(e_, size64_t(n) + 1);
    const index_t nnz = cuda::p0_pattern(s_, n, agg.data(), P.row_ptr.data());
    P.col_ind = Array<index_t>(e_, nnz);
    P.values = Array<double>(e_, nnz);
    cuda::p0_fill(s_, n, agg.data(), P.row_ptr.data(), P.col_ind.data(), P.values.data());
  }

  // One attempt of the symbolic phase with algorithm alg; C's pattern on success.
  cusparseStatus_t try_symbolic(SpgemmPlan& plan, const CsrRef& A, const CsrRef& B, Matrix& C, cusparseSpGEMMAlg_t alg)
  {
    if (plan.desc) cusparseSpGEMM_destroyDescr(plan.desc);
    if (plan.c) cusparseDestroySpMat(plan.c);
    plan.desc = nullptr;
    plan.c = nullptr;
    plan.alg = alg;
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateCsr(&plan.c, A.nrows, B.ncols, 0, C.row_ptr.data(), nullptr, nullptr,
                                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                              CUDA_R_64F));
    BLOCKRES_CUSPARSE_CHECK(cusparseSpGEMM_createDescr(&plan.desc));
    const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    std::size_t s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0;
#define BLOCKRES_TRY(call)                             \
  do {                                                 \
    const cusparseStatus_t st_ = (call);               \
    if (st_ != CUSPARSE_STATUS_SUCCESS) return st_;    \
  } while (0)
    BLOCKRES_TRY(cusparseSpGEMMreuse_workEstimation(h_, op, op, plan.a, plan.b, plan.c, alg, plan.desc, &s1, nullptr));
    // Named apart in the run log's device memory by part: buf4 and buf5 stay with the plan for every numeric product.
    const AllocationLabel label("the AMG Galerkin products' cuSPARSE buffers");
    Array<char> b1(e_, static_cast<size64_t>(s1));
    BLOCKRES_TRY(cusparseSpGEMMreuse_workEstimation(h_, op, op, plan.a, plan.b, plan.c, alg, plan.desc, &s1, b1.data()));
    BLOCKRES_TRY(cusparseSpGEMMreuse_nnz(h_, op, op, plan.a, plan.b, plan.c, alg, plan.desc, &s2, nullptr, &s3, nullptr,
                                         &s4, nullptr));
    Array<char> b2(e_, static_cast<size64_t>(s2)), b3(e_, static_cast<size64_t>(s3));
    plan.buf4 = Array<char>(e_, static_cast<size64_t>(s4));
    BLOCKRES_TRY(cusparseSpGEMMreuse_nnz(h_, op, op, plan.a, plan.b, plan.c, alg, plan.desc, &s2, b2.data(), &s3,
                                         b3.data(), &s4, plan.buf4.data()));
    int64_t rows = 0, cols = 0, nnz = 0;
    BLOCKRES_CUSPARSE_CHECK(cusparseSpMatGetSize(plan.c, &rows, &cols, &nnz));
    if (nnz > INT_MAX)
      throw std::runtime_error(
          fmt::format("AMG: a Galerkin product has {} entries, more than 32-bit column indices address", nnz));
    {
      const AllocationLabel product("the AMG coarse operators");  // the product itself: part of the hierarchy
      C.col_ind = Array<index_t>(e_, nnz);
      C.values = Array<double>(e_, nnz);
    }
    BLOCKRES_CUSPARSE_CHECK(cusparseCsrSetPointers(plan.c, C.row_ptr.data(), C.col_ind.data(), C.values.data()));
    BLOCKRES_TRY(cusparseSpGEMMreuse_copy(h_, op, op, plan.a, plan.b, plan.c, alg, plan.desc, &s5, nullptr));
    plan.buf5 = Array<char>(e_, static_cast<size64_t>(s5));
    BLOCKRES_TRY(cusparseSpGEMMreuse_copy(h_, op, op, plan.a, plan.b, plan.c, alg, plan.desc, &s5, plan.buf5.data()));
#undef BLOCKRES_TRY
    e_->synchronize();  // b1..b3 are released at return
    return CUSPARSE_STATUS_SUCCESS;
  }

  std::unique_ptr<Plan> product_symbolic(const CsrRef& A, const CsrRef& B, Matrix& C) override
  {
    auto plan = std::make_unique<SpgemmPlan>();
    C.nrows = A.nrows;
    C.ncols = B.ncols;
    C.row_ptr = Array<index_t>(e_, size64_t(A.nrows) + 1);
    if (A.nnz() == 0 || B.nnz() == 0) {
      plan->empty = true;
      cuda::fill(s_, A.nrows + 1, 0, C.row_ptr.data());
      C.col_ind = Array<index_t>(e_, 0);
      C.values = Array<double>(e_, 0);
      return plan;
    }
    plan->a = make_csr(A);
    plan->b = make_csr(B);
    // The deterministic algorithm first (the same bits on every run); it can refuse long rows of
    // the intermediate products ("insufficient resources", seen on a log-normal std 3 problem of
    // 8M rows), then cuSPARSE's default algorithm takes over for this product.
    for (const cusparseSpGEMMAlg_t alg : {spgemm_alg, CUSPARSE_SPGEMM_DEFAULT}) {
      const cusparseStatus_t st = try_symbolic(*plan, A, B, C, alg);
      if (st == CUSPARSE_STATUS_SUCCESS) break;
      if (st == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES && alg == CUSPARSE_SPGEMM_DEFAULT)
        throw ProductTooLarge(fmt::format(
            "cuSPARSE has insufficient resources for the symbolic SpGEMM of an AMG level ({} x {} times {} x {})",
            A.nrows, A.ncols, B.nrows, B.ncols));
      if (st != CUSPARSE_STATUS_INSUFFICIENT_RESOURCES)
        throw std::runtime_error(fmt::format("cuSPARSE error '{}' in the symbolic SpGEMM of an AMG level ({} x {} times {} x {})",
                                             cusparseGetErrorString(st), A.nrows, A.ncols, B.nrows, B.ncols));
    }
    return plan;
  }

  void product_numeric(Plan& p, const CsrRef& A, const CsrRef& B, Matrix& C) override
  {
    auto& plan = static_cast<SpgemmPlan&>(p);
    if (plan.empty) return;
    BLOCKRES_CUSPARSE_CHECK(cusparseCsrSetPointers(plan.a, const_cast<index_t*>(A.row_ptr),
                                                   const_cast<index_t*>(A.col_ind), const_cast<double*>(A.values)));
    BLOCKRES_CUSPARSE_CHECK(cusparseCsrSetPointers(plan.b, const_cast<index_t*>(B.row_ptr),
                                                   const_cast<index_t*>(B.col_ind), const_cast<double*>(B.values)));
    BLOCKRES_CUSPARSE_CHECK(cusparseCsrSetPointers(plan.c, C.row_ptr.data(), C.col_ind.data(), C.values.data()));
    const double one = 1.0, zero = 0.0;
    const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    BLOCKRES_CUSPARSE_CHECK(cusparseSpGEMMreuse_compute(h_, op, op, &one, plan.a, plan.b, &zero, plan.c, CUDA_R_64F,
                                                        plan.alg, plan.desc));
  }

  std::unique_ptr<Plan> transpose_symbolic(const Matrix& P, Matrix& R) override
  {
    auto plan = std::make_unique<TransposePlan>();
    R.nrows = P.ncols;
    R.ncols = P.nrows;
    R.row_ptr = Array<index_t>(e_, size64_t(P.ncols) + 1);
    R.col_ind = Array<index_t>(e_, P.nnz());
    R.values = Array<double>(e_, P.nnz());
    plan->map = Array<index_t>(e_, P.nnz());
    if (P.nnz() == 0) {
      cuda::fill(s_, P.ncols + 1, 0, R.row_ptr.data());
      return plan;
    }
    std::size_t bytes = 0;
    Array<double> number(e_, P.nnz());
    cuda::iota(s_, P.nnz(), number.data());
    BLOCKRES_CUSPARSE_CHECK(cusparseCsr2cscEx2_bufferSize(
        h_, P.nrows, P.ncols, P.nnz(), number.data(), P.row_ptr.data(), P.col_ind.data(), R.values.data(),
        R.row_ptr.data(), R.col_ind.data(), CUDA_R_64F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
        CUSPARSE_CSR2CSC_ALG1, &bytes));
    Array<char> buf(e_, static_cast<size64_t>(std::max<std::size_t>(bytes, 1)));
    BLOCKRES_CUSPARSE_CHECK(cusparseCsr2cscEx2(h_, P.nrows, P.ncols, P.nnz(), number.data(), P.row_ptr.data(),
                                               P.col_ind.data(), R.values.data(), R.row_ptr.data(), R.col_ind.data(),
                                               CUDA_R_64F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                                               CUSPARSE_CSR2CSC_ALG1, buf.data()));
    cuda::to_index(s_, P.nnz(), R.values.data(), plan->map.data());
    transpose_numeric(*plan, P, R);
    e_->synchronize();  // number and buf are released at return
    return plan;
  }

  void transpose_numeric(Plan& p, const Matrix& P, Matrix& R) override
  {
    const auto& plan = static_cast<TransposePlan&>(p);
    cuda::gather(s_, P.nnz(), P.values.data(), plan.map.data(), R.values.data());
  }

  bool same_structure(const Array<index_t>& row_ptr, const Array<index_t>& col_ind, const CsrRef& A) override
  {
    if (row_ptr.size() != size64_t(A.nrows) + 1 || col_ind.size() != size64_t(A.nnz())) return false;
    return cuda::equal2(s_, row_ptr.data(), A.row_ptr, row_ptr.size(), col_ind.data(), A.col_ind, col_ind.size(),
                        scalar_.data());
  }

  void jacobi_radius_bound_into(const CsrRef& A, double* rho) override { cuda::jacobi_radius_bound_into(s_, A, rho); }
  void smoothed_prolongation_from(const CsrRef& A, const Array<index_t>& agg, const double* rho, Matrix& P) override
  {
    cuda::smoothed_prolongation_from(s_, A, agg.data(), rho, P.ref(), P.values.data());
  }
  void jacobi_scaling_into(const CsrRef& A, double omega, bool l1, Array<double>& dinv, index_t* first_bad) override
  {
    if (dinv.size() != A.nrows) dinv = Array<double>(e_, A.nrows);
    cuda::jacobi_scaling_into(s_, A, omega, l1, dinv.data(), first_bad);
  }
  void coarse_factor_into(const CsrRef& A, Array<double>& lu, Array<index_t>& piv, Array<double>& inv,
                          index_t* info) override
  {
    const index_t n = A.nrows;
    if (lu.size() != size64_t(n) * n) lu = Array<double>(e_, size64_t(n) * n);
    if (piv.size() != n) piv = Array<index_t>(e_, n);
    cuda::densify(s_, A, lu.data());
    kernels::BatchLayout layout;
    layout.count = 1;
    layout.uniform = layout.max_size = n;
    static_assert(sizeof(index_t) == sizeof(int), "the LU's info is an int");
    kernels::cuda::lu_factor(s_, layout, lu.data(), piv.data(), reinterpret_cast<int*>(info));
    if (n < coarse_inverse_min_rows) {
      inv = Array<double>();
      return;
    }
    if (inv.size() != size64_t(n) * n) inv = Array<double>(e_, size64_t(n) * n);
    kernels::cuda::lu_inverse(s_, n, lu.data(), piv.data(), inv.data());
  }

  double jacobi_radius_bound(const CsrRef& A) override
  {
    return cuda::jacobi_radius_bound(s_, A, ratio_.data());
  }

  void smoothed_prolongation(const CsrRef& A, const Array<index_t>& agg, double omega, Matrix& P) override
  {
    cuda::smoothed_prolongation(s_, A, agg.data(), omega, P.ref(), P.values.data());
  }

  index_t jacobi_scaling(const CsrRef& A, double omega, bool l1, Array<double>& dinv) override
  {
    if (dinv.size() != A.nrows) dinv = Array<double>(e_, A.nrows);
    return cuda::jacobi_scaling(s_, A, omega, l1, dinv.data(), scalar_.data());
  }

  int coarse_factor(const CsrRef& A, Array<double>& lu, Array<index_t>& piv, Array<double>& inv) override
  {
    coarse_factor_into(A, lu, piv, inv, scalar_.data());
    return scalar_.to_host()[0];
  }

  void coarse_solve(index_t n, const Array<double>& lu, const Array<index_t>& piv, const Array<double>& inv,
                    const double* b, double* x) override
  {
    if (!inv.empty()) {  // x = A^{-1} b: inv is row-major, so column-major it is A^{-T}, and gemv_t gives A^{-1} b
      kernels::cuda::gemv_t(e_->blas_handle(), size64_t(n), n, inv.data(), b, x);
      return;
    }
    kernels::BatchLayout layout;
    layout.count = 1;
    layout.uniform = layout.max_size = n;
    kernels::cuda::lu_solve(s_, layout, lu.data(), piv.data(), b, x);
  }

  std::unique_ptr<Plan> ilu_symbolic(const CsrRef& A, int trisolve_sweeps) override
  {
    const index_t n = A.nrows, nnz = A.nnz();
    std::vector<index_t> row_ptr(static_cast<std::size_t>(n) + 1), col(static_cast<std::size_t>(nnz)), sorted, perm;
    e_->copy_to_host(row_ptr.data(), A.row_ptr, row_ptr.size() * sizeof(index_t));
    if (nnz) e_->copy_to_host(col.data(), A.col_ind, col.size() * sizeof(index_t));
    cpu::sorted_pattern({n, A.ncols, row_ptr.data(), col.data(), nullptr, nnz}, sorted, perm);
    auto p = std::make_unique<IluPlan>();
    p->sweeps = trisolve_sweeps;
    p->sched = kernels::ilu_schedule(n, row_ptr.data(), sorted.data());
    auto up = [&](const std::vector<index_t>& v) { return Array<index_t>(e_, std::span<const index_t>(v)); };
    p->col = up(sorted);
    p->perm = up(perm);
    p->diag = up(p->sched.diag);
    p->lower_rows = up(p->sched.lower_rows);
    p->upper_rows = up(p->sched.upper_rows);
    p->lu = Array<double>(e_, nnz);
    p->dinv = Array<double>(e_, n);
    p->w1 = Array<double>(e_, n);
    p->w2 = Array<double>(e_, n);
    return p;
  }
  void ilu_factor_into(Plan& plan, const CsrRef& A, index_t* info) override
  {
    auto& p = static_cast<IluPlan&>(plan);
    cuda::gather(s_, size64_t(A.nnz()), A.values, p.perm.data(), p.lu.data());
    static_assert(sizeof(index_t) == sizeof(int), "the factorisation's info is an int");
    // 1 x 1 blocks need no workspace (kernels::cuda::block_ilu0_workspace_doubles).
    kernels::cuda::block_ilu0_factor(s_, p.device(), {A.nrows, A.nrows, 1, A.row_ptr, p.col.data(), p.lu.data()},
                                     p.dinv.data(), reinterpret_cast<int*>(info), nullptr);
  }
  void ilu_sweep(const Plan& plan, const CsrRef& A, const double* b, const double* x_in, double* x_out,
                 double* work) override
  {
    const auto& p = static_cast<const IluPlan&>(plan);
    const BsrView<const double> LU{A.nrows, A.nrows, 1, A.row_ptr, p.col.data(), p.lu.data()};
    const CsrRef lu{A.nrows, A.ncols, A.row_ptr, p.col.data(), p.lu.data(), A.nnz()};
    const size64_t n = A.nrows;
    const auto d = p.device();
    ilu_smoother_apply(
        p.sweeps, b, x_in, x_out, work, p.w1.data(), p.w2.data(), [&](double* r) { cuda::residual(s_, A, b, x_in, r); },
        [&](const double* rhs, double* y) { kernels::cuda::block_ilu0_lower_solve(s_, d, LU, rhs, y); },
        [&](const double* c, double* u) { kernels::cuda::block_ilu0_upper_solve(s_, d, LU, p.dinv.data(), c, u); },
        [&](bool upper, const double* rhs, const double* x, double* y) {
          cuda::ilu_jacobi_sweep(s_, lu, p.dinv.data(), upper, rhs, x, y);
        },
        [&](const double* x, const double* u, double* out) {
          kernels::cuda::axpbypcz(s_, n, 1.0, x, 1.0, u, 0.0, out);
        });
  }

  void spmv(const CycleRef& M, double alpha, const double* x, double beta, double* y) override
  {
    M.visit([&](const auto& A) { cuda::spmv(s_, A, alpha, x, beta, y); });
  }
  void jacobi_sweep(const CycleRef& M, const double* dinv, const double* b, const double* x_in, double* x_out) override
  {
    M.visit([&](const auto& A) { cuda::jacobi_sweep(s_, A, dinv, b, x_in, x_out); });
  }
  void residual(const CycleRef& M, const double* b, const double* x, double* r) override
  {
    M.visit([&](const auto& A) { cuda::residual(s_, A, b, x, r); });
  }
  void smooth_zero_residual(const CycleRef& M, const double* dinv, const double* b, double* x, double* r) override
  {
    M.visit([&](const auto& A) { cuda::smooth_zero_residual(s_, A, dinv, b, x, r); });
  }
  void to_fp32(size64_t n, const double* in, float* out) override { kernels::cuda::to_fp32(s_, n, in, out); }

 private:
  ExecPtr e_;
  stream_t s_;
  Array<index_t> scalar_;
  Array<double> ratio_{e_, 1};  // the radius bound's accumulator
  cusparseHandle_t h_ = nullptr;
  StreamGraph cycle_graph_{e_}, numeric_graph_{e_};
  StreamGraph& slot(Graph g) { return g == Graph::cycle ? cycle_graph_ : numeric_graph_; }
};

}  // namespace

std::unique_ptr<Ops> make_cuda_ops(const ExecPtr& exec) { return std::make_unique<CudaOps>(exec); }

}  // namespace blockres::amg
