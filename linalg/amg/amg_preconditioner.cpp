// AmgPreconditioner: hierarchy setup (full and numeric-only) and the V-cycle, on the CPU
// reference kernels of amg_kernels.hpp.
#include "linalg/amg/amg.hpp"

#include "kernels/batched_lu.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace blockres {

std::string_view to_string(AmgSmoother s)
{
  switch (s) {
    case AmgSmoother::jacobi: return "jacobi";
    case AmgSmoother::l1_jacobi: return "l1_jacobi";
  }
  return "?";
}

std::string_view to_string(AmgInterpolation p)
{
  switch (p) {
    case AmgInterpolation::plain: return "plain";
    case AmgInterpolation::smoothed: return "smoothed";
  }
  return "?";
}

std::string AmgStatistics::to_string() const
{
  std::string s = fmt::format("AMG: {} levels, operator complexity {:.3f}, grid complexity {:.3f}{}\n", levels.size(),
                              operator_complexity, grid_complexity,
                              coarsest_direct ? "" : " (coarsest level smoothed only)");
  for (std::size_t l = 0; l < levels.size(); ++l)
    s += fmt::format("  level {:2d}: {:>10d} rows {:>12d} nnz {:6.2f} nnz/row\n", l, levels[l].rows, levels[l].nnz,
                     levels[l].rows ? double(levels[l].nnz) / levels[l].rows : 0.0);
  return s;
}

AmgPreconditioner::AmgPreconditioner(ExecPtr exec, AmgOptions opt) : exec_(std::move(exec)), opt_(opt)
{
  if (!exec_) throw std::invalid_argument("AmgPreconditioner: null executor");
  if (exec_->is_cuda()) throw std::invalid_argument("AmgPreconditioner: the CUDA backend is not implemented yet (CPU only)");
  if (opt_.aggregate_size != 2 && opt_.aggregate_size != 4 && opt_.aggregate_size != 8)
    throw std::invalid_argument("AmgPreconditioner: aggregate_size must be 2, 4 or 8");
  if (!(opt_.theta >= 0.0)) throw std::invalid_argument("AmgPreconditioner: theta must be >= 0");
  if (opt_.pre_sweeps < 0 || opt_.post_sweeps < 0) throw std::invalid_argument("AmgPreconditioner: negative sweeps");
  if (opt_.max_levels < 1) throw std::invalid_argument("AmgPreconditioner: max_levels must be >= 1");
  if (opt_.refresh_interval < 1) throw std::invalid_argument("AmgPreconditioner: refresh_interval must be >= 1");
  if (opt_.max_coarse < 1 || opt_.max_coarse > kernels::batched_lu_max_size)
    throw std::invalid_argument(
        fmt::format("AmgPreconditioner: max_coarse must be in 1..{}", kernels::batched_lu_max_size));
}

std::string AmgPreconditioner::name() const
{
  return fmt::format("amg({}, aggregates {}, {} {}/{})", to_string(opt_.interpolation), opt_.aggregate_size,
                     to_string(opt_.smoother), opt_.pre_sweeps, opt_.post_sweeps);
}

amg::CsrRef AmgPreconditioner::level_operator(int l) const
{
  return l == 0 ? fine_ : amg::ref(levels_.at(static_cast<std::size_t>(l)).A);
}

void AmgPreconditioner::check_matrix(const BsrMatrix& A) const
{
  if (A.block_size() != 1) throw std::invalid_argument("AmgPreconditioner: scalar matrices only (block size 1); for a block system use type = \"cpr\" with an amg pressure stage");
  if (A.nrows() != A.ncols()) throw std::invalid_argument("AmgPreconditioner: the matrix must be square");
  if (A.exec().is_cuda()) throw std::invalid_argument("AmgPreconditioner: the matrix must be on the CPU executor");
}

bool AmgPreconditioner::same_structure(const BsrMatrix& A) const
{
  if (levels_.empty()) return false;
  const std::size_t n = static_cast<std::size_t>(A.nrows()) + 1, nnz = static_cast<std::size_t>(A.nnzb());
  return key_row_ptr_.size() == n && key_col_ind_.size() == nnz &&
         std::memcmp(key_row_ptr_.data(), A.row_ptr().data(), n * sizeof(index_t)) == 0 &&
         (nnz == 0 || std::memcmp(key_col_ind_.data(), A.col_ind().data(), nnz * sizeof(index_t)) == 0);
}

SetupStatus AmgPreconditioner::setup(const BsrMatrix& A)
{
  check_matrix(A);
  if (opt_.reuse_structure && same_structure(A)) {
    if (++since_refresh_ < opt_.refresh_interval) {
      fine_ = {A.nrows(), A.ncols(), A.row_ptr().data(), A.col_ind().data(), A.values().data()};
      ++stats_.kept_setups;
      return {};
    }
    since_refresh_ = 0;
    return refresh_numeric(A);
  }
  since_refresh_ = 0;
  return setup_full(A);
}

SetupStatus AmgPreconditioner::setup_full(const BsrMatrix& A)
{
  using namespace amg;
  check_matrix(A);
  fine_ = {A.nrows(), A.ncols(), A.row_ptr().data(), A.col_ind().data(), A.values().data()};
  key_row_ptr_.assign(fine_.row_ptr, fine_.row_ptr + fine_.nrows + 1);
  key_col_ind_.assign(fine_.col_ind, fine_.col_ind + fine_.nnz());
  levels_.clear();
  levels_.emplace_back();
  const int passes = opt_.aggregate_size == 2 ? 1 : opt_.aggregate_size == 4 ? 2 : 3;

  for (int l = 0;; ++l) {
    const CsrRef Al = level_operator(l);
    const index_t n = Al.nrows;
    if (n <= opt_.max_coarse || l + 1 >= opt_.max_levels) break;

    // Aggregation: `passes` pairwise matchings, each on the graph of the previous aggregates.
    Csr G;
    // Vanek, Mandel, Brezina: theta halves with every level, since Galerkin operators get denser
    // and each coupling weaker relative to the diagonal.
    cpu::strength_graph(Al, n, opt_.theta * std::ldexp(1.0, -l), G);
    std::vector<index_t> agg;  // fine row -> aggregate
    index_t nc = cpu::pairwise_match(G, agg);
    std::vector<index_t> pass_agg = agg;  // node of the last pass's graph -> aggregate
    for (int pass = 1; pass < passes && nc > 1; ++pass) {
      Csr Gc;
      cpu::coarse_graph(G, pass_agg, nc, Gc);
      const index_t nc2 = cpu::pairwise_match(Gc, pass_agg);
      for (auto& a : agg) a = pass_agg[a];
      G = std::move(Gc);
      nc = nc2;
    }
    if (nc == 0 || double(nc) > opt_.min_coarsening_ratio * double(n)) break;

    // Patterns of P, R = P^T, A P and A_c = R (A P).
    Csr Ac;
    {
      Level& L = levels_[static_cast<std::size_t>(l)];
      L.agg = std::move(agg);
      Csr P0;
      cpu::tentative_prolongation(L.agg, nc, P0);
      if (opt_.interpolation == AmgInterpolation::smoothed) {
        cpu::spgemm_symbolic(Al, ref(P0), L.P);
        L.P0 = std::move(P0);
      } else {
        L.P = std::move(P0);
      }
      cpu::transpose_symbolic(ref(L.P), L.R, L.r_map);
      cpu::spgemm_symbolic(Al, ref(L.P), L.AP);
      cpu::spgemm_symbolic(ref(L.R), ref(L.AP), Ac);
    }
    levels_.emplace_back();
    levels_.back().A = std::move(Ac);
    numeric_level(l);
  }
  ++stats_.full_setups;
  return finish_numeric();
}

SetupStatus AmgPreconditioner::refresh_numeric(const BsrMatrix& A)
{
  check_matrix(A);
  if (!same_structure(A))
    throw std::invalid_argument("AmgPreconditioner::refresh_numeric: the matrix structure differs from the last full setup");
  fine_ = {A.nrows(), A.ncols(), A.row_ptr().data(), A.col_ind().data(), A.values().data()};
  for (int l = 0; l + 1 < num_levels(); ++l) numeric_level(l);
  ++stats_.numeric_setups;
  return finish_numeric();
}

void AmgPreconditioner::numeric_level(int l)
{
  using namespace amg;
  Level& L = levels_[static_cast<std::size_t>(l)];
  const CsrRef Al = level_operator(l);
  if (opt_.interpolation == AmgInterpolation::smoothed) {
    const double rho = cpu::jacobi_radius_bound(Al);
    L.sa_omega = rho > 0.0 ? 4.0 / (3.0 * rho) : 0.0;
    cpu::smoothed_prolongation(Al, ref(L.P0), L.sa_omega, L.P);
  }  // plain: P's values are ones from the symbolic phase
  cpu::transpose_numeric(ref(L.P), L.r_map, L.R);
  cpu::spgemm_numeric(Al, ref(L.P), L.AP);
  cpu::spgemm_numeric(ref(L.R), ref(L.AP), levels_[static_cast<std::size_t>(l) + 1].A);
}

SetupStatus AmgPreconditioner::finish_numeric()
{
  using namespace amg;
  const int nl = num_levels();
  const index_t nc = level_operator(nl - 1).nrows;
  coarse_direct_ = nc <= kernels::batched_lu_max_size;
  SetupStatus status;
  for (int l = 0; l < nl; ++l) {
    Level& L = levels_[static_cast<std::size_t>(l)];
    const CsrRef Al = level_operator(l);
    const std::size_t n = static_cast<std::size_t>(Al.nrows);
    L.x.assign(n, 0.0);
    L.b.assign(n, 0.0);
    L.r.assign(n, 0.0);
    L.t.assign(n, 0.0);
    if (l == nl - 1 && coarse_direct_) {
      L.dinv.clear();
      continue;
    }
    L.dinv.resize(n);
    const index_t bad = cpu::jacobi_scaling(Al, opt_.jacobi_omega, opt_.smoother == AmgSmoother::l1_jacobi, L.dinv.data());
    if (bad && status.ok) {
      status.ok = false;
      status.message = fmt::format("AMG level {}: row {} has a zero or non-finite smoother scaling", l, bad - 1);
    }
  }
  // Coarsest level: dense copy, LU with partial pivoting (a batch of one block).
  coarse_lu_.clear();
  coarse_piv_.clear();
  if (coarse_direct_ && nc > 0) {
    const CsrRef Ac = level_operator(nl - 1);
    coarse_lu_.assign(static_cast<std::size_t>(nc) * nc, 0.0);
    coarse_piv_.assign(static_cast<std::size_t>(nc), 0);
    for (index_t i = 0; i < nc; ++i)
      for (index_t p = Ac.row_ptr[i]; p < Ac.row_ptr[i + 1]; ++p)
        coarse_lu_[static_cast<std::size_t>(i) * nc + Ac.col_ind[p]] = Ac.values[p];
    kernels::BatchLayout layout;
    layout.count = 1;
    layout.uniform = layout.max_size = nc;
    int info = 0;
    kernels::cpu::lu_factor(layout, coarse_lu_.data(), coarse_piv_.data(), &info);
    if (info != 0 && status.ok) {
      status.ok = false;
      status.message = fmt::format("AMG coarsest level ({} rows): LU pivot {} is zero or tiny (singular operator)", nc, info);
    }
  }
  update_statistics();
  return status;
}

void AmgPreconditioner::update_statistics()
{
  stats_.levels.clear();
  double nnz = 0.0, rows = 0.0;
  for (int l = 0; l < num_levels(); ++l) {
    const amg::CsrRef A = level_operator(l);
    stats_.levels.push_back({A.nrows, A.nnz()});
    nnz += A.nnz();
    rows += A.nrows;
  }
  const amg::CsrRef A0 = level_operator(0);
  stats_.operator_complexity = A0.nnz() ? nnz / A0.nnz() : 1.0;
  stats_.grid_complexity = A0.nrows ? rows / A0.nrows : 1.0;
  stats_.coarsest_direct = coarse_direct_;
}

void AmgPreconditioner::cycle(int l) const
{
  using namespace amg;
  const Level& L = levels_[static_cast<std::size_t>(l)];
  const CsrRef A = level_operator(l);
  const int nl = num_levels();
  if (l == nl - 1 && coarse_direct_) {
    if (A.nrows == 0) return;
    kernels::BatchLayout layout;
    layout.count = 1;
    layout.uniform = layout.max_size = A.nrows;
    kernels::cpu::lu_solve(layout, coarse_lu_.data(), coarse_piv_.data(), L.b.data(), L.x.data());
    return;
  }
  // Smoothing from a zero guess; x and t alternate (Jacobi reads the old iterate everywhere).
  auto smooth = [&](int sweeps, bool from_zero) {
    for (int s = 0; s < sweeps; ++s) {
      if (from_zero && s == 0) {
        cpu::jacobi_sweep(A, L.dinv.data(), L.b.data(), nullptr, L.x.data());
      } else {
        cpu::jacobi_sweep(A, L.dinv.data(), L.b.data(), L.x.data(), L.t.data());
        L.x.swap(L.t);
      }
    }
  };
  if (l == nl - 1) {  // coarsest level too large for the dense LU: smoothing only
    smooth(std::max(2, opt_.pre_sweeps + opt_.post_sweeps), true);
    return;
  }
  if (opt_.pre_sweeps > 0) smooth(opt_.pre_sweeps, true);
  else std::fill(L.x.begin(), L.x.end(), 0.0);

  const Level& C = levels_[static_cast<std::size_t>(l) + 1];
  cpu::residual(A, L.b.data(), L.x.data(), L.r.data());
  cpu::spmv(ref(L.R), 1.0, L.r.data(), 0.0, C.b.data());
  cycle(l + 1);
  cpu::spmv(ref(L.P), 1.0, C.x.data(), 1.0, L.x.data());
  smooth(opt_.post_sweeps, false);
}

void AmgPreconditioner::apply(const Vector& r, Vector& z) const
{
  if (levels_.empty()) throw std::logic_error("AmgPreconditioner::apply before setup");
  const amg::Level& L0 = levels_[0];
  const std::size_t n = L0.b.size();
  if (static_cast<std::size_t>(r.size()) != n || static_cast<std::size_t>(z.size()) != n)
    throw std::invalid_argument("AmgPreconditioner::apply: vector size differs from the matrix");
  std::copy(r.data(), r.data() + n, L0.b.begin());
  cycle(0);
  std::copy(L0.x.begin(), L0.x.end(), z.data());
}

}  // namespace blockres
