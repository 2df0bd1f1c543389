// AmgPreconditioner: hierarchy setup (full and numeric-only) and the V-cycle, one driver for both
// backends on the operations of amg_ops.hpp.
#include "linalg/preconditioners/amg/amg.hpp"

#include "linalg/preconditioners/amg/amg_distributed.hpp"
#include "linalg/preconditioners/amg/amg_ops.hpp"

#include "kernels/batched/batched_lu.hpp"
#include "linalg/vector_ops.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace blockres {

using amg::Level;

std::string AmgStatistics::to_string() const
{
  std::string s = fmt::format("AMG: {} levels, operator complexity {:.3f}, grid complexity {:.3f}{}{}\n", levels.size(),
                              operator_complexity, grid_complexity,
                              coarsest_direct ? "" : " (coarsest level smoothed only)",
                              plain_fallbacks ? fmt::format(", {} level(s) with a plain P (smoothed product too large)",
                                                            plain_fallbacks)
                                              : std::string());
  for (std::size_t l = 0; l < levels.size(); ++l)
    s += fmt::format("  level {:2d}: {:>10d} rows {:>12d} nnz {:6.2f} nnz/row\n", l, levels[l].rows, levels[l].nnz,
                     levels[l].rows ? double(levels[l].nnz) / levels[l].rows : 0.0);
  return s;
}

std::string AmgPreconditioner::setup_summary() const
{
  if (stats_.levels.empty()) return {};
  std::string rows;
  for (const AmgLevelStatistics& l : stats_.levels) rows += fmt::format("{}{}", rows.empty() ? "" : ", ", l.rows);
  std::string s = fmt::format("{} level{} ({} rows{}), operator complexity {:.2f}, grid complexity {:.2f}; {} full "
                              "setup{}, {} value refresh{}",
                              stats_.levels.size(), stats_.levels.size() == 1 ? "" : "s", rows,
                              stats_.coarsest_direct ? "" : "; the coarsest smoothed only", stats_.operator_complexity,
                              stats_.grid_complexity, stats_.full_setups, stats_.full_setups == 1 ? "" : "s",
                              stats_.numeric_setups, stats_.numeric_setups == 1 ? "" : "es");
  if (opt_.refresh_growth > 0 || opt_.refresh_interval > 1)
    s += fmt::format(", {} setup{} kept", stats_.kept_setups, stats_.kept_setups == 1 ? "" : "s");
  if (opt_.refresh_growth > 0)
    s += fmt::format(" ({} refresh{} within a time step)", stats_.growth_refreshes,
                     stats_.growth_refreshes == 1 ? "" : "es");
  if (dist_) {
    const int d = dist_->distributed_levels();
    s += d == 0 ? std::string("; gathered whole onto every rank")
                : fmt::format("; {} level{} across the ranks{}", d, d == 1 ? "" : "s",
                              dist_->gathered_at() >= 0 ? ", the rest gathered onto every rank" : "");
    s += fmt::format(" (full setups {:.2f} s)", dist_->full_setup_seconds());
  }
  return s;
}

AmgPreconditioner::AmgPreconditioner(ExecPtr exec, AmgOptions opt) : exec_(std::move(exec)), opt_(opt)
{
  if (!exec_) throw std::invalid_argument("AmgPreconditioner: null executor");
  if (opt_.aggregate_size != 2 && opt_.aggregate_size != 4 && opt_.aggregate_size != 8)
    throw std::invalid_argument("AmgPreconditioner: aggregate_size must be 2, 4 or 8");
  if (!(opt_.theta >= 0.0)) throw std::invalid_argument("AmgPreconditioner: theta must be >= 0");
  if (opt_.pre_sweeps < 0 || opt_.post_sweeps < 0) throw std::invalid_argument("AmgPreconditioner: negative sweeps");
  if (opt_.cycles < 1) throw std::invalid_argument("AmgPreconditioner: cycles must be >= 1");
  if (opt_.trisolve_sweeps < 0) throw std::invalid_argument("AmgPreconditioner: trisolve_sweeps must be >= 0");
  if (opt_.max_levels < 1) throw std::invalid_argument("AmgPreconditioner: max_levels must be >= 1");
  if (opt_.refresh_interval < 1) throw std::invalid_argument("AmgPreconditioner: refresh_interval must be >= 1");
  if (opt_.storage == StoragePrecision::fp32 && opt_.smoother == AmgSmoother::ilu0)
    throw std::invalid_argument("AmgPreconditioner: fp32 storage needs a Jacobi smoother (not ilu0)");
  if (opt_.max_coarse < 1 || opt_.max_coarse > kernels::batched_lu_max_size)
    throw std::invalid_argument(
        fmt::format("AmgPreconditioner: max_coarse must be in 1..{}", kernels::batched_lu_max_size));
  ops_ = amg::Ops::create(exec_);
}

AmgPreconditioner::~AmgPreconditioner() = default;

std::string AmgPreconditioner::name() const
{
  const std::string agg = opt_.aggregation == AmgAggregation::mis2
                              ? std::string("mis2 aggregates")
                              : fmt::format("matched aggregates of {}", opt_.aggregate_size);
  // The cycle only when it is not the default one V-cycle (the name is in logs and result files).
  std::string cyc;
  if (opt_.cycle != AmgCycle::v || opt_.cycles != 1)
    cyc = opt_.cycles == 1 ? fmt::format(", {}-cycle", to_string(opt_.cycle))
                           : fmt::format(", {} {}-cycles", opt_.cycles, to_string(opt_.cycle));
  std::string smoother(to_string(opt_.smoother));
  if (opt_.smoother == AmgSmoother::jacobi && opt_.jacobi_omega != AmgOptions{}.jacobi_omega)
    smoother += fmt::format("({:g})", opt_.jacobi_omega);
  if (opt_.smoother == AmgSmoother::ilu0 && opt_.trisolve_sweeps > 0)
    smoother += fmt::format(" ({} trisolve sweeps)", opt_.trisolve_sweeps);
  // The reuse only when it is not the default refresh at every setup.
  std::string reuse;
  if (opt_.refresh_growth > 0)
    reuse = fmt::format(", kept within a time step up to {:g}% iteration growth", 100 * opt_.refresh_growth);
  else if (opt_.refresh_interval > 1)
    reuse = fmt::format(", refreshed every {} setups", opt_.refresh_interval);
  const std::string storage = opt_.storage == StoragePrecision::fp32 ? ", fp32 storage" : "";
  return fmt::format("amg({}, {}, {} {}/{}{}{}{})", to_string(opt_.interpolation), agg, smoother, opt_.pre_sweeps,
                     opt_.post_sweeps, cyc, reuse, storage);
}

amg::CsrRef AmgPreconditioner::level_operator(int l) const
{
  return l == 0 ? fine_ : levels_.at(static_cast<std::size_t>(l)).A.ref();
}

namespace {

amg::Csr host_copy(const amg::CsrRef& A, const Executor& e)
{
  amg::Csr C;
  C.nrows = A.nrows;
  C.ncols = A.ncols;
  const index_t nnz = A.nz >= 0 ? A.nz : 0;
  C.row_ptr.resize(static_cast<std::size_t>(A.nrows) + 1);
  C.col_ind.resize(static_cast<std::size_t>(nnz));
  C.values.resize(static_cast<std::size_t>(nnz));
  if (A.row_ptr) e.copy_to_host(C.row_ptr.data(), A.row_ptr, C.row_ptr.size() * sizeof(index_t));
  if (nnz) {
    e.copy_to_host(C.col_ind.data(), A.col_ind, C.col_ind.size() * sizeof(index_t));
    if (A.values) e.copy_to_host(C.values.data(), A.values, C.values.size() * sizeof(double));
  }
  // Rows sorted by column (the CUDA products leave cuSPARSE's order).
  std::vector<std::pair<index_t, double>> row;
  for (index_t i = 0; i < C.nrows; ++i) {
    const index_t b = C.row_ptr[i], e2 = C.row_ptr[i + 1];
    row.clear();
    for (index_t p = b; p < e2; ++p) row.emplace_back(C.col_ind[p], C.values[p]);
    std::sort(row.begin(), row.end());
    for (index_t p = b; p < e2; ++p) C.col_ind[p] = row[p - b].first, C.values[p] = row[p - b].second;
  }
  return C;
}

}  // namespace

amg::HostLevel AmgPreconditioner::level_host(int l) const
{
  const amg::Level& L = levels_.at(static_cast<std::size_t>(l));
  amg::HostLevel h;
  h.A = host_copy(level_operator(l), *exec_);
  if (L.P.nrows) h.P = host_copy(L.P.ref(), *exec_);
  if (L.R.nrows) h.R = host_copy(L.R.ref(), *exec_);
  h.agg = L.agg.to_host();
  h.dinv = L.dinv.to_host();
  if (L.smoothed) {
    const double rho = rho_.to_host().at(static_cast<std::size_t>(l));
    h.sa_omega = rho > 0.0 ? 4.0 / (3.0 * rho) : 0.0;
  }
  return h;
}

void AmgPreconditioner::check_matrix(const BsrMatrix& A) const
{
  if (A.block_size() != 1) throw std::invalid_argument("AmgPreconditioner: scalar matrices only (block size 1); for a block system use type = \"cpr\" with an amg pressure stage");
  if (A.nrows() != A.ncols()) throw std::invalid_argument("AmgPreconditioner: the matrix must be square");
  if (&A.exec() != exec_.get() && A.exec().is_cuda() != exec_->is_cuda())
    throw std::invalid_argument("AmgPreconditioner: the matrix lives on another backend");
}

bool AmgPreconditioner::same_structure(const BsrMatrix& A) const
{
  if (levels_.empty()) return false;
  const amg::CsrRef a{A.nrows(), A.ncols(), A.row_ptr().data(), A.col_ind().data(), A.values().data(), A.nnzb()};
  return ops_->same_structure(key_row_ptr_, key_col_ind_, a);
}

AmgPreconditioner::Reuse AmgPreconditioner::reuse_decision()
{
  if (opt_.refresh_growth > 0) {
    const bool grew = feedback_ && base_iterations_ >= 0 &&
                      double(last_iterations_) > (1.0 + opt_.refresh_growth) * base_iterations_ + 1.0;
    const bool keep = !new_step_ && feedback_ && !last_failed_ && !grew;
    feedback_ = false;
    if (keep) {
      ++stats_.kept_setups;
      return Reuse::keep;
    }
    if (!new_step_) ++stats_.growth_refreshes;
    new_step_ = false;
    base_iterations_ = -1;
    return Reuse::refresh;
  }
  if (++since_refresh_ < opt_.refresh_interval) {
    ++stats_.kept_setups;
    return Reuse::keep;
  }
  since_refresh_ = 0;
  return Reuse::refresh;
}

SetupStatus AmgPreconditioner::setup(const BsrMatrix& A)
{
  check_matrix(A);
  dist_.reset();
  if (same_structure(A)) {
    if (reuse_decision() == Reuse::keep) {
      fine_ = {A.nrows(), A.ncols(), A.row_ptr().data(), A.col_ind().data(), A.values().data(), A.nnzb()};
      narrow_fine();
      return {};
    }
    return refresh_numeric(A);
  }
  since_refresh_ = 0;
  new_step_ = false, base_iterations_ = -1, feedback_ = false;
  return setup_full(A);
}

SetupStatus AmgPreconditioner::setup_distributed(const dist::DistBsrMatrix& A)
{
  if (A.comm().size() == 1 || opt_.smoother == AmgSmoother::ilu0) return setup(A.diag());
  if (A.block_size() != 1)
    throw std::invalid_argument("AmgPreconditioner: scalar matrices only (block size 1); for a block system use "
                                "type = \"cpr\" with an amg pressure stage");
  if (!levels_.empty()) {  // a serial hierarchy from an earlier setup() is not this one
    levels_.clear();
    key_row_ptr_ = Array<index_t>();
    key_col_ind_ = Array<index_t>();
  }
  if (!dist_) dist_ = std::make_unique<amg::DistHierarchy>(exec_, opt_);
  SetupStatus status;
  if (dist_->same_structure(A)) {
    if (reuse_decision() == Reuse::keep) {
      dist_->keep(A);
      return {};
    }
    status = dist_->refresh_numeric(A);
    ++stats_.numeric_setups;
  } else {
    since_refresh_ = 0;
    new_step_ = false, base_iterations_ = -1, feedback_ = false;
    status = dist_->setup_full(A);
    ++stats_.full_setups;
  }
  dist_->statistics(stats_);
  return status;
}

void AmgPreconditioner::note_new_step()
{
  new_step_ = true;
  if (dist_) dist_->note_new_step();
}

void AmgPreconditioner::note_solve(int iterations, bool converged)
{
  if (dist_) dist_->note_solve(iterations, converged);
  last_iterations_ = iterations;
  last_failed_ = !converged;
  feedback_ = true;
  if (base_iterations_ < 0) base_iterations_ = iterations;
}

SetupStatus AmgPreconditioner::setup_full(const BsrMatrix& A)
{
  using namespace amg;
  check_matrix(A);
  ops_->drop_graph(Ops::Graph::cycle);
  ops_->drop_graph(Ops::Graph::numeric);
  numeric_key_ = {};
  fine_ = {A.nrows(), A.ncols(), A.row_ptr().data(), A.col_ind().data(), A.values().data(), A.nnzb()};
  key_row_ptr_ = Array<index_t>(exec_, A.nrows() + 1);
  key_row_ptr_.copy_from(A.row_ptr());
  key_col_ind_ = Array<index_t>(exec_, A.nnzb());
  key_col_ind_.copy_from(A.col_ind());
  levels_.clear();
  levels_.emplace_back();
  rho_ = Array<double>();
  stats_.plain_fallbacks = 0;  // describes the current hierarchy
  const int passes = opt_.aggregate_size == 2 ? 1 : opt_.aggregate_size == 4 ? 2 : 3;

  for (int l = 0;; ++l) {
    const CsrRef Al = level_operator(l);
    const index_t n = Al.nrows;
    if (n <= opt_.max_coarse || l + 1 >= opt_.max_levels) break;

    // Aggregation: `passes` handshake matchings, each on the graph of the previous aggregates.
    Matrix G;
    // Vanek, Mandel, Brezina: theta halves with every level, since Galerkin operators get denser
    // and each coupling weaker relative to the diagonal.
    ops_->strength_graph(Al, n, opt_.theta * std::ldexp(1.0, -l), G);
    Array<index_t> agg;  // fine row -> aggregate
    index_t nc = opt_.aggregation == AmgAggregation::mis2 ? ops_->mis2_aggregate(G, agg) : ops_->handshake_match(G, agg);
    for (int pass = 1; opt_.aggregation == AmgAggregation::matching && pass < passes && nc > 1; ++pass) {
      Matrix Gc;
      ops_->coarse_graph(G, agg, nc, Gc);
      Array<index_t> pass_agg;  // aggregate of the last pass -> merged aggregate
      const index_t nc2 = ops_->handshake_match(Gc, pass_agg);
      ops_->compose(agg, pass_agg);
      G = std::move(Gc);
      nc = nc2;
    }
    if (nc == 0 || double(nc) > opt_.min_coarsening_ratio * double(n)) break;

    // Patterns (and product plans) of P, R = P^T, A P and A_c = R (A P).
    Matrix Ac;
    {
      Level& L = levels_[static_cast<std::size_t>(l)];
      L.agg = std::move(agg);
      auto build = [&](bool smoothed) {
        Matrix P0;
        ops_->tentative_prolongation(L.agg, nc, P0);
        L.smoothed = smoothed;
        if (smoothed) {
          // P's pattern is A P0's; P0 itself is only needed for this product.
          L.ap0_plan = ops_->product_symbolic(Al, P0.ref(), L.P);
          L.P0 = std::move(P0);
        } else {
          L.ap0_plan.reset();
          L.P0 = Matrix();
          L.P = std::move(P0);
        }
        L.r_plan = ops_->transpose_symbolic(L.P, L.R);
        L.ap_plan = ops_->product_symbolic(Al, L.P.ref(), L.AP);
        L.rap_plan = ops_->product_symbolic(L.R.ref(), L.AP.ref(), Ac);
      };
      try {
        build(opt_.interpolation == AmgInterpolation::smoothed);
      } catch (const amg::ProductTooLarge&) {
        // cuSPARSE could not form a smoothed-aggregation product (rows of the intermediate
        // product too long: high-contrast coefficients make the smoothed P and the Galerkin
        // operators dense). This level takes the piecewise-constant P, whose products are sparse.
        if (opt_.interpolation != AmgInterpolation::smoothed) throw;
        ++stats_.plain_fallbacks;
        build(false);
      }
    }
    levels_.emplace_back();
    levels_.back().A = std::move(Ac);
    if (rho_.size() < levels_.size()) {  // one slot per level, kept across the growth
      Array<double> grown(exec_, 2 * levels_.size());
      if (rho_.size()) exec_->copy(grown.data(), rho_.data(), rho_.size() * sizeof(double));
      rho_ = std::move(grown);
    }
    numeric_level(l);
  }
  ++stats_.full_setups;
  queue_finish();
  return read_status();
}

SetupStatus AmgPreconditioner::refresh_numeric(const BsrMatrix& A)
{
  using amg::Ops;
  check_matrix(A);
  if (!same_structure(A))
    throw std::invalid_argument("AmgPreconditioner::refresh_numeric: the matrix structure differs from the last full setup");
  fine_ = {A.nrows(), A.ncols(), A.row_ptr().data(), A.col_ind().data(), A.values().data(), A.nnzb()};
  // The re-setup's launches depend on nothing but the fine matrix's arrays and the hierarchy's own:
  // recorded once (CUDA), replayed while the arrays are the same.
  const std::array<const void*, 3> key{fine_.row_ptr, fine_.col_ind, fine_.values};
  const auto queue = [&] {
    for (int l = 0; l + 1 < num_levels(); ++l) numeric_level(l);
    queue_finish();
  };
  if (!(key == numeric_key_ && ops_->replay(Ops::Graph::numeric))) {
    ops_->drop_graph(Ops::Graph::numeric);
    numeric_key_ = {};
    bool recorded = false;
    if (numeric_graph_usable_ && exec_->is_cuda()) {
      try {
        recorded = ops_->record(Ops::Graph::numeric, queue);
      } catch (const std::exception&) {  // a library call refused inside the recording
        recorded = false;
      }
      if (recorded) {
        numeric_key_ = key;
        ops_->replay(Ops::Graph::numeric);
      } else {
        numeric_graph_usable_ = false;  // run the launches directly from now on
      }
    }
    if (!recorded) queue();
  }
  stats_.numeric_graph = !(numeric_key_ == std::array<const void*, 3>{});
  ++stats_.numeric_setups;
  return read_status();
}

void AmgPreconditioner::numeric_level(int l)
{
  Level& L = levels_[static_cast<std::size_t>(l)];
  const amg::CsrRef Al = level_operator(l);
  const bool refresh_p = !(opt_.keep_interpolation && L.p_ready);
  if (L.smoothed && refresh_p) {
    double* rho = rho_.data() + l;  // omega = 4 / (3 rho), computed where rho lives
    ops_->jacobi_radius_bound_into(Al, rho);
    ops_->product_numeric(*L.ap0_plan, Al, L.P0.ref(), L.P);  // P = A P0
    ops_->smoothed_prolongation_from(Al, L.agg, rho, L.P);
  }  // plain: P's values are ones from the symbolic phase
  if (refresh_p) ops_->transpose_numeric(*L.r_plan, L.P, L.R);
  L.p_ready = true;
  ops_->product_numeric(*L.ap_plan, Al, L.P.ref(), L.AP);
  ops_->product_numeric(*L.rap_plan, L.R.ref(), L.AP.ref(), levels_[static_cast<std::size_t>(l) + 1].A);
}

void AmgPreconditioner::queue_finish()
{
  const int nl = num_levels();
  const index_t nc = level_operator(nl - 1).nrows;
  coarse_direct_ = nc <= kernels::batched_lu_max_size;
  if (status_.size() != size64_t(nl) + 1) status_ = Array<index_t>(exec_, size64_t(nl) + 1);
  for (int l = 0; l < nl; ++l) {
    Level& L = levels_[static_cast<std::size_t>(l)];
    const amg::CsrRef Al = level_operator(l);
    const size64_t n = Al.nrows;
    if (L.x.size() != n) {
      L.x = Array<double>(exec_, n);
      L.b = Array<double>(exec_, n);
      L.r = Array<double>(exec_, n);
      L.t = Array<double>(exec_, n);
    }
    if (l == nl - 1 && coarse_direct_) {
      L.dinv = Array<double>();
      continue;
    }
    if (opt_.smoother == AmgSmoother::ilu0) {
      // The plan (pattern, schedule; it may wait for the device) is made by the full setup, never
      // inside a recorded numeric re-setup.
      if (!L.ilu) L.ilu = ops_->ilu_symbolic(Al, opt_.trisolve_sweeps);
      ops_->ilu_factor_into(*L.ilu, Al, status_.data() + l);
      continue;
    }
    ops_->jacobi_scaling_into(Al, opt_.jacobi_omega, opt_.smoother == AmgSmoother::l1_jacobi, L.dinv,
                              status_.data() + l);
  }
  // Coarsest level: dense copy, LU with partial pivoting (a batch of one block).
  if (!(coarse_direct_ && nc > 0)) {
    coarse_lu_ = Array<double>();
    coarse_piv_ = Array<index_t>();
    coarse_inv_ = Array<double>();
  } else {
    ops_->coarse_factor_into(level_operator(nl - 1), coarse_lu_, coarse_piv_, coarse_inv_, status_.data() + nl);
  }
  narrow_levels();
}

void AmgPreconditioner::narrow_fine()
{
  if (opt_.storage != StoragePrecision::fp32) return;
  const size64_t n = size64_t(fine_.nz);
  if (fine32_.size() != n) fine32_ = Array<float>(exec_, n);  // the first setup (never inside a recording)
  ops_->to_fp32(n, fine_.values, fine32_.data());
}

// Allocations happen in a full setup only (a numeric re-setup keeps every size), so a recorded
// numeric re-setup replays the same copies into the same arrays.
void AmgPreconditioner::narrow_levels()
{
  if (opt_.storage != StoragePrecision::fp32) return;
  narrow_fine();
  auto narrow = [&](const amg::Matrix& M, Array<float>& m32) {
    const size64_t n = M.values.size();
    if (m32.size() != n) m32 = Array<float>(exec_, n);
    ops_->to_fp32(n, M.values.data(), m32.data());
  };
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    amg::Level& L = levels_[l];
    if (l > 0) narrow(L.A, L.A32);
    if (l + 1 < levels_.size()) narrow(L.P, L.P32), narrow(L.R, L.R32);
  }
}

amg::CycleRef AmgPreconditioner::cycle_operator(int l) const
{
  const amg::CsrRef A = level_operator(l);
  if (opt_.storage != StoragePrecision::fp32) return A;
  return {A, l == 0 ? fine32_.data() : levels_[static_cast<std::size_t>(l)].A32.data()};
}

amg::CycleRef AmgPreconditioner::cycle_transfer(const amg::Matrix& M, const Array<float>& m32) const
{
  if (opt_.storage != StoragePrecision::fp32) return M.ref();
  return {M.ref(), m32.data()};
}

SetupStatus AmgPreconditioner::read_status()
{
  const int nl = num_levels();
  const index_t nc = level_operator(nl - 1).nrows;
  const bool factored = coarse_direct_ && nc > 0;
  SetupStatus status;
  // The one wait of a numeric re-setup: every level's status in one copy.
  const std::vector<index_t> st = status_.to_host();
  for (int l = 0; l < nl && status.ok; ++l) {
    if (l == nl - 1 && coarse_direct_) break;  // no smoother on a directly solved coarsest level
    if (opt_.smoother == AmgSmoother::ilu0) {  // 0, or the first bad row + 1
      if (st[l] != 0) {
        status.ok = false;
        status.message =
            fmt::format("AMG level {}: the ILU(0) smoother's pivot in row {} is zero or not finite", l, st[l] - 1);
      }
    } else if (st[l] != INT_MAX) {
      status.ok = false;
      status.message = fmt::format("AMG level {}: row {} has a zero or non-finite smoother scaling", l, st[l]);
    }
  }
  if (factored && st[nl] != 0 && status.ok) {
    status.ok = false;
    status.message = fmt::format("AMG coarsest level ({} rows): LU pivot {} is zero or tiny (singular operator)", nc, st[nl]);
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

std::uint64_t AmgPreconditioner::launch_epoch() const
{
  if (dist_) return 0;  // halo exchanges through the host: never recorded
  LaunchKey k;
  k.add(reinterpret_cast<std::uintptr_t>(fine_.row_ptr)).add(reinterpret_cast<std::uintptr_t>(fine_.col_ind));
  k.add(reinterpret_cast<std::uintptr_t>(fine_.values)).add(std::uint64_t(fine_.nrows)).add(std::uint64_t(fine_.nz));
  k.add(std::uint64_t(levels_.size())).add(std::uint64_t(coarse_direct_)).add(fine32_);
  for (const amg::Level& L : levels_) {
    for (const amg::Matrix* M : {&L.A, &L.P, &L.R}) k.add(M->row_ptr).add(M->col_ind).add(M->values);
    k.add(L.dinv).add(L.b).add(L.r).add_pair(L.x, L.t).add(L.A32).add(L.P32).add(L.R32);
    k.add(reinterpret_cast<std::uintptr_t>(L.ilu.get()));
  }
  return k.add(coarse_lu_).add(coarse_piv_).add(coarse_inv_).value();
}

// Bytes of the operations of cycle(l, zero_guess), branch for branch: a CSR pass reads values and
// columns (12 bytes an entry; 8 with fp32 storage) and row pointers once, each vector it reads or
// writes once.
double AmgPreconditioner::cycle_bytes(int l, bool zero_guess) const
{
  const amg::CsrRef A = level_operator(l);
  const double entry = opt_.storage == StoragePrecision::fp32 ? 8.0 : 12.0;
  const double n = A.nrows, csr = entry * double(A.nnz()) + 4.0 * (n + 1.0);
  const int nl = num_levels();
  if (l == nl - 1 && coarse_direct_)  // the inverse, or the LU and pivots; b and x
    return coarse_inv_.empty() ? 8.0 * n * n + 4.0 * n + 16.0 * n : 8.0 * n * n + 16.0 * n;
  const double sweep = csr + 32.0 * n;       // x_in, b, dinv read, x_out written
  const double first = 24.0 * n;            // from zero: dinv, b read, x written
  auto smooth = [&](int sweeps, bool from_zero) {
    double b = 0.0;
    for (int s = 0; s < sweeps; ++s) b += from_zero && s == 0 ? first : sweep;
    return b;
  };
  if (l == nl - 1) return smooth(std::max(2, opt_.pre_sweeps + opt_.post_sweeps), zero_guess);
  double bytes = 0.0;
  if (zero_guess && opt_.pre_sweeps == 1) bytes += csr + 32.0 * n;  // the fused sweep from zero and residual
  else bytes += smooth(opt_.pre_sweeps, zero_guess) + (opt_.pre_sweeps == 0 && zero_guess ? 8.0 * n : 0.0) +
                csr + 24.0 * n;  // (zeroing), residual
  const Level& L = levels_[static_cast<std::size_t>(l)];
  const double nc = level_operator(l + 1).nrows;
  bytes += entry * double(L.R.nnz()) + 4.0 * (nc + 1.0) + 8.0 * (n + nc);  // restrict
  bytes += cycle_bytes(l + 1, true);
  const bool coarse_exact = l + 1 == nl - 1 && coarse_direct_;
  if (opt_.cycle == AmgCycle::w && !coarse_exact) bytes += cycle_bytes(l + 1, false);
  bytes += entry * double(L.P.nnz()) + 4.0 * (n + 1.0) + 8.0 * (nc + 2.0 * n);  // prolongate and add
  return bytes + smooth(opt_.post_sweeps, false);
}

double AmgPreconditioner::apply_bytes() const
{
  if (dist_) return 0.0;  // not stated for the distributed cycle
  if (levels_.empty() || opt_.smoother == AmgSmoother::ilu0) return 0.0;
  const double n = level_operator(0).nrows;
  double bytes = 32.0 * n;  // r into the level vector, the result out
  for (int k = 0; k < opt_.cycles; ++k) bytes += cycle_bytes(0, k == 0);
  return bytes;
}

void AmgPreconditioner::cycle(int l, bool zero_guess) const
{
  const Level& L = levels_[static_cast<std::size_t>(l)];
  const amg::CsrRef A = level_operator(l);
  const int nl = num_levels();
  if (l == nl - 1 && coarse_direct_) {  // exact: the guess does not matter
    if (A.nrows == 0) return;
    ops_->coarse_solve(A.nrows, coarse_lu_, coarse_piv_, coarse_inv_, L.b.data(), L.x.data());
    return;
  }
  // Smoothing; x and t alternate (Jacobi reads the old iterate everywhere). Ac: the operator in the
  // cycle's storage (fp64 or fp32 values; the ILU(0) smoother, fp64 only, takes A).
  const bool ilu = opt_.smoother == AmgSmoother::ilu0;
  const amg::CycleRef Ac = cycle_operator(l);
  // One smoothing step x_out = x_in + M^{-1} (b - A x_in) (x_in == nullptr: zero); L.r is free
  // scratch here (the residual to restrict is formed after the pre-smoothing).
  auto sweep = [&](const double* x_in, double* x_out) {
    if (ilu) ops_->ilu_sweep(*L.ilu, A, L.b.data(), x_in, x_out, L.r.data());
    else ops_->jacobi_sweep(Ac, L.dinv.data(), L.b.data(), x_in, x_out);
  };
  auto smooth = [&](int sweeps, bool from_zero) { amg::smooth(sweeps, from_zero, L.x, L.t, sweep); };
  if (l == nl - 1) {  // coarsest level too large for the dense LU: smoothing only
    smooth(std::max(2, opt_.pre_sweeps + opt_.post_sweeps), zero_guess);
    return;
  }
  if (zero_guess && opt_.pre_sweeps == 1 && !ilu) {  // the default: the sweep from zero and the residual in one pass
    ops_->smooth_zero_residual(Ac, L.dinv.data(), L.b.data(), L.x.data(), L.r.data());
  } else {
    if (opt_.pre_sweeps > 0) smooth(opt_.pre_sweeps, zero_guess);
    else if (zero_guess) fill(L.x, 0.0);
    ops_->residual(Ac, L.b.data(), L.x.data(), L.r.data());
  }
  const Level& C = levels_[static_cast<std::size_t>(l) + 1];
  ops_->spmv(cycle_transfer(L.R, L.R32), 1.0, L.r.data(), 0.0, C.b.data());
  cycle(l + 1, true);
  // W-cycle: the coarse level once more from its first result (pointless when it is solved exactly).
  const bool coarse_exact = l + 1 == nl - 1 && coarse_direct_;
  if (opt_.cycle == AmgCycle::w && !coarse_exact) cycle(l + 1, false);
  ops_->spmv(cycle_transfer(L.P, L.P32), 1.0, C.x.data(), 1.0, L.x.data());
  smooth(opt_.post_sweeps, false);
}

void AmgPreconditioner::cycles() const
{
  for (int k = 0; k < opt_.cycles; ++k) cycle(0, k == 0);
}

void AmgPreconditioner::apply(const Vector& r, Vector& z) const
{
  if (dist_) {
    dist_->apply(r, z);
    return;
  }
  if (levels_.empty()) throw std::logic_error("AmgPreconditioner::apply before setup");
  const amg::Level& L0 = levels_[0];
  const size64_t n = L0.b.size();
  if (r.size() != n || z.size() != n)
    throw std::invalid_argument("AmgPreconditioner::apply: vector size differs from the matrix");
  copy(r, L0.b);
  // CUDA: the cycle's launches are recorded once and replayed while the hierarchy's arrays stay
  // where they are (numeric re-setups write values in place; a full setup or a new fine matrix
  // changes launch_epoch). The x/t swaps of the smoother happen on the host during the recording
  // only, so L0.x names the replay's result.
  if (const std::uint64_t epoch = launch_epoch(); epoch != cycle_epoch_) {
    ops_->drop_graph(amg::Ops::Graph::cycle);
    cycle_epoch_ = epoch;
  }
  if (!ops_->replay(amg::Ops::Graph::cycle)) {
    if (ops_->record(amg::Ops::Graph::cycle, [&] { cycles(); })) ops_->replay(amg::Ops::Graph::cycle);
    else cycles();  // no graph here (the CPU, a caller's recording, a call that cannot be recorded)
  }
  copy(L0.x, z);
}

}  // namespace blockres
