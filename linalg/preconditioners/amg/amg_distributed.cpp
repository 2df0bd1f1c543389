// The distributed AMG hierarchy (amg_distributed.hpp): set-up across the ranks on the serial operations of
// amg_ops.hpp, the gathered coarse levels, and the cycle with its halo exchanges.
#include "linalg/preconditioners/amg/amg_distributed.hpp"

#include "kernels/halo/halo.hpp"
#include "linalg/preconditioners/amg/amg_ops.hpp"
#include "linalg/vector_ops.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace blockres::amg {

using dist::gindex_t;

// One distributed level: its rows (index map, halo plan and a channel for vectors of it), its operator in local
// form, and (all but the last) the transfer to the next level.
struct DistLevel {
  explicit DistLevel(dist::IndexMap m) : map(std::move(m)) {}
  dist::IndexMap map;
  dist::HaloPlan plan;
  std::unique_ptr<dist::HaloChannel> halo;
  Matrix A;  // owned rows; columns: owned, then ghosts (map order)
  Array<float> A32;
  Array<index_t> agg;  // owned row -> this rank's aggregate (-1: none)
  Matrix P0;           // smoothed: the tentative P over owned and ghost rows (ghost rows empty)
  Array<double> Af;    // smoothed: A's values filtered to the owned columns, row sums kept (lump_ghost_columns)
  Matrix P, R;         // owned rows x this rank's aggregates, and its transpose
  Matrix Pext;         // P's rows, then the ghosts' rows of P on their owners: owned + ghost rows x next level's local ids
  Matrix AP;           // A Pext
  std::unique_ptr<Plan> ap0_plan, r_plan, ap_plan, rap_plan;
  bool smoothed = false, p_ready = false;
  dist::HaloPlan pv_plan;                 // P's values of the rows the peers hold as ghosts
  std::unique_ptr<dist::HaloChannel> pv;
  Array<float> P32, R32;
  Array<double> dinv, rho;
  mutable Array<double> x, t, b, r;  // x, t: owned + ghost entries; b, r: owned
  index_t owned() const { return map.owned(); }
};

namespace {

// The rows of a pattern (row_ptr, gcol: global columns) that the peers hold as ghosts, sent to them (two
// Communicator::alltoallv, as HaloPlan::build asks for its ids: the plan's peers are in ascending rank order on both
// sides); returns the ghost rows received, in the map's ghost order: their lengths and columns.
void exchange_rows(const dist::Communicator& comm, const dist::HaloPlan& plan, const std::vector<index_t>& row_ptr,
                   const std::vector<gindex_t>& gcol, std::vector<index_t>& ghost_len, std::vector<gindex_t>& ghost_col)
{
  std::vector<gindex_t> len, col;
  std::vector<int> len_to(std::size_t(comm.size()), 0), col_to(len_to), from;
  for (std::size_t k = 0; k < plan.send_rank.size(); ++k)
    for (index_t q = plan.send_ptr[k]; q < plan.send_ptr[k + 1]; ++q) {
      const auto row = std::size_t(plan.send_ids[std::size_t(q)]);
      len.push_back(row_ptr[row + 1] - row_ptr[row]);
      col.insert(col.end(), gcol.begin() + row_ptr[row], gcol.begin() + row_ptr[row + 1]);
      ++len_to[std::size_t(plan.send_rank[k])];
      col_to[std::size_t(plan.send_rank[k])] += row_ptr[row + 1] - row_ptr[row];
    }
  const std::vector<gindex_t> lens = comm.alltoallv(len, len_to, from);
  ghost_len.assign(lens.begin(), lens.end());
  ghost_col = comm.alltoallv(col, col_to, from);
}

Matrix upload(const ExecPtr& exec, index_t nrows, index_t ncols, const std::vector<index_t>& rp,
              const std::vector<index_t>& ci)
{
  Matrix M;
  M.nrows = nrows;
  M.ncols = ncols;
  M.row_ptr = Array<index_t>(exec, std::span<const index_t>(rp));
  M.col_ind = Array<index_t>(exec, std::span<const index_t>(ci));
  M.values = Array<double>(exec, ci.size());
  return M;
}

}  // namespace

DistHierarchy::DistHierarchy(ExecPtr exec, const AmgOptions& opt)
    : exec_(std::move(exec)), opt_(opt), ops_(Ops::create(exec_))
{
  if (opt_.smoother == AmgSmoother::ilu0)
    throw std::invalid_argument("DistHierarchy: the distributed levels smooth with Jacobi or l1-Jacobi");
}

DistHierarchy::~DistHierarchy() = default;

bool DistHierarchy::same_structure(const dist::DistBsrMatrix& A) const { return !levels_.empty() && fine_ == &A; }

void DistHierarchy::fine_values(const dist::DistBsrMatrix& A)
{
  DistLevel& L = *levels_[0];
  const index_t n = L.owned();
  const BsrMatrix& d = A.diag();
  const auto& o = A.offd();
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    kernels::cuda::hcat_rows(exec_->stream(), n, 1, d.row_ptr().data(), d.values().data(),
                             o ? o->row_ptr().data() : nullptr, o ? o->values().data() : nullptr, L.A.values.data());
#endif
  } else {
    kernels::cpu::hcat_rows(n, 1, d.row_ptr().data(), d.values().data(), o ? o->row_ptr().data() : nullptr,
                            o ? o->values().data() : nullptr, L.A.values.data());
  }
  if (opt_.storage == StoragePrecision::fp32) {
    if (L.A32.size() != L.A.values.size()) L.A32 = Array<float>(exec_, L.A.values.size());
    ops_->to_fp32(L.A.values.size(), L.A.values.data(), L.A32.data());
  }
}

SetupStatus DistHierarchy::setup_full(const dist::DistBsrMatrix& A)
{
  if (A.block_size() != 1) throw std::invalid_argument("DistHierarchy: scalar matrices only (block size 1)");
  const auto t0 = std::chrono::steady_clock::now();
  comm_ = A.comm_ptr();
  fine_ = &A;
  levels_.clear();
  tail_.reset();
  whole_.reset();
  gathered_at_ = -1;
  plain_fallbacks_ = 0;

  // Level 0: A's diag and offd parts side by side.
  {
    auto L0 = std::make_unique<DistLevel>(A.map());
    L0->plan = A.halo();
    L0->halo = std::make_unique<dist::HaloChannel>(exec_, comm_, L0->plan, 1);
    const index_t n = A.map().owned();
    const std::vector<index_t> dp = A.diag().row_ptr().to_host(), dc = A.diag().col_ind().to_host();
    std::vector<index_t> op, oc;
    if (A.offd()) op = A.offd()->row_ptr().to_host(), oc = A.offd()->col_ind().to_host();
    std::vector<index_t> rp(1, 0), ci;
    for (index_t i = 0; i < n; ++i) {
      ci.insert(ci.end(), dc.begin() + dp[std::size_t(i)], dc.begin() + dp[std::size_t(i) + 1]);
      if (!op.empty())
        for (index_t q = op[std::size_t(i)]; q < op[std::size_t(i) + 1]; ++q) ci.push_back(n + oc[std::size_t(q)]);
      rp.push_back(index_t(ci.size()));
    }
    L0->A = upload(exec_, n, A.map().size(), rp, ci);
    levels_.push_back(std::move(L0));
  }
  fine_values(A);

  const int passes = opt_.aggregate_size == 2 ? 1 : opt_.aggregate_size == 4 ? 2 : 3;
  for (int l = 0;; ++l) {
    DistLevel& L = *levels_[std::size_t(l)];
    const index_t n = L.owned();
    const long long gn = comm_->sum(static_cast<long long>(n));
    if (gn <= opt_.gather_rows) {
      gather_symbolic(l);
      break;
    }
    if (l + 1 >= opt_.max_levels) break;  // the last level is smoothed only
    Matrix G;
    ops_->strength_graph(L.A.ref(), n, opt_.theta * std::ldexp(1.0, -l), G);  // the owned x owned part only
    Array<index_t> agg;
    index_t nc = opt_.aggregation == AmgAggregation::mis2 ? ops_->mis2_aggregate(G, agg) : ops_->handshake_match(G, agg);
    for (int pass = 1; opt_.aggregation == AmgAggregation::matching && pass < passes && nc > 1; ++pass) {
      Matrix Gc;
      ops_->coarse_graph(G, agg, nc, Gc);
      Array<index_t> pass_agg;
      const index_t nc2 = ops_->handshake_match(Gc, pass_agg);
      ops_->compose(agg, pass_agg);
      G = std::move(Gc);
      nc = nc2;
    }
    const long long gnc = comm_->sum(static_cast<long long>(nc));
    if (gnc == 0 || double(gnc) > opt_.min_coarsening_ratio * double(gn)) {
      // Coarsening stalled: a level still small enough is gathered (the serial hierarchy goes on from there), a
      // larger one is the smoothed-only coarsest level.
      if (gn <= 8LL * opt_.gather_rows) gather_symbolic(l);
      break;
    }
    adopt_orphans(L, agg);
    transfer_symbolic(l, std::move(agg), nc);
    numeric_level(l);
  }
  // Global sizes of the distributed levels (the gathered one is the tail's level 0).
  dist_stats_.clear();
  for (int l = 0; l < distributed_levels(); ++l) {
    const DistLevel& L = *levels_[std::size_t(l)];
    dist_stats_.push_back({comm_->sum(static_cast<long long>(L.owned())), comm_->sum(static_cast<long long>(L.A.nnz()))});
  }
  SetupStatus status = finish();
  exec_->synchronize();
  full_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return status;
}

// A row the aggregation left out (no strong coupling inside the rank) that couples to ghosts: its strong couplings
// may all cross the boundary, where no aggregate can reach it. It joins the aggregate of its strongest aggregated
// neighbour inside the rank, as the serial aggregation would have put it into one across the boundary. Measured on
// test_dist_amg's heterogeneous slabs at 3 ranks (one seed, 8 CG solves): 1.17x the serial iterations without (one
// solve 23 -> 40), 1.02x with; over 20 runs the sums went from 1.03x..1.25x to 0.96x..1.05x. Once per structure,
// on the host.
void DistHierarchy::adopt_orphans(const DistLevel& L, Array<index_t>& agg) const
{
  const index_t n = L.owned();
  std::vector<index_t> a = agg.to_host();
  if (std::none_of(a.begin(), a.begin() + n, [](index_t v) { return v < 0; })) return;  // no row left out
  const std::vector<index_t> rp = L.A.row_ptr.to_host(), ci = L.A.col_ind.to_host();
  const std::vector<double> v = L.A.values.to_host();
  bool changed = false;
  std::vector<index_t> out(a);
  for (index_t i = 0; i < n; ++i) {
    if (a[std::size_t(i)] >= 0) continue;
    bool ghost = false;
    index_t best = -1;
    double wb = 0.0;
    for (index_t q = rp[std::size_t(i)]; q < rp[std::size_t(i) + 1]; ++q) {
      const index_t j = ci[std::size_t(q)];
      if (j >= n) ghost = ghost || v[std::size_t(q)] != 0.0;
      else if (j != i && a[std::size_t(j)] >= 0 && std::abs(v[std::size_t(q)]) > wb) best = j, wb = std::abs(v[std::size_t(q)]);
    }
    if (ghost && best >= 0) out[std::size_t(i)] = a[std::size_t(best)], changed = true;
  }
  if (changed) agg.copy_from_host(out);
}

void DistHierarchy::transfer_symbolic(int l, Array<index_t> agg, index_t nc)
{
  DistLevel& L = *levels_[std::size_t(l)];
  const index_t n = L.owned(), ng = L.map.ghosts();
  L.agg = std::move(agg);
  auto build = [&](bool smoothed) {
    L.smoothed = smoothed;
    if (smoothed) {
      // P0 over owned and ghost rows, the ghost rows empty: A P0 = A_own P0 (local smoothing).
      std::vector<index_t> ext = L.agg.to_host();
      ext.resize(std::size_t(n) + std::size_t(ng), -1);
      const Array<index_t> agg_ext(exec_, std::span<const index_t>(ext));
      Matrix P0;
      ops_->tentative_prolongation(agg_ext, nc, P0);
      L.ap0_plan = ops_->product_symbolic(L.A.ref(), P0.ref(), L.P);
      L.P0 = std::move(P0);
      L.Af = Array<double>(exec_, L.A.values.size());
    } else {
      L.ap0_plan.reset();
      L.P0 = Matrix();
      L.Af = Array<double>();
      ops_->tentative_prolongation(L.agg, nc, L.P);
    }
    L.r_plan = ops_->transpose_symbolic(L.P, L.R);
  };
  try {
    build(opt_.interpolation == AmgInterpolation::smoothed);
  } catch (const ProductTooLarge&) {
    if (opt_.interpolation != AmgInterpolation::smoothed) throw;
    ++plain_fallbacks_;
    build(false);
  }

  // The next level's rows: every rank's aggregates numbered in rank order.
  const gindex_t mine = nc;
  const std::vector<gindex_t> counts = comm_->allgatherv(std::span<const gindex_t>(&mine, 1));
  std::vector<gindex_t> start(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) start[r + 1] = start[r] + counts[r];
  const gindex_t off = start[std::size_t(comm_->rank())];
  auto owner_of = [start](gindex_t g) {
    return int(std::upper_bound(start.begin(), start.end(), g) - start.begin()) - 1;
  };

  // P's rows the peers hold as ghosts, with global columns; the ghosts' rows from their owners.
  const std::vector<index_t> p_ptr = L.P.row_ptr.to_host(), p_col = L.P.col_ind.to_host();
  std::vector<gindex_t> p_gcol(p_col.size());
  for (std::size_t q = 0; q < p_col.size(); ++q) p_gcol[q] = off + p_col[q];
  std::vector<index_t> ghost_len;
  std::vector<gindex_t> ghost_col;
  exchange_rows(*comm_, L.plan, p_ptr, p_gcol, ghost_len, ghost_col);
  std::vector<gindex_t> owned(static_cast<std::size_t>(nc));
  std::iota(owned.begin(), owned.end(), off);
  dist::IndexMap cmap(std::move(owned), ghost_col, owner_of, comm_->rank());

  // P_ext = [P; the ghosts' rows] over the next level's local ids.
  std::vector<index_t> rp(p_ptr), ci(p_col);
  std::size_t at = 0;
  for (index_t len : ghost_len) {
    for (index_t q = 0; q < len; ++q) ci.push_back(cmap.local(ghost_col[at++]));
    rp.push_back(index_t(ci.size()));
  }
  L.Pext = upload(exec_, n + ng, cmap.size(), rp, ci);
  // P's values of the rows each peer holds, in that peer's ghost order, into the values of P_ext's ghost rows.
  dist::HaloPlan& pv = L.pv_plan;
  pv = dist::HaloPlan();
  pv.send_rank = L.plan.send_rank;
  pv.send_ptr.assign(1, 0);
  for (std::size_t k = 0; k + 1 < L.plan.send_ptr.size(); ++k) {
    for (index_t q = L.plan.send_ptr[k]; q < L.plan.send_ptr[k + 1]; ++q) {
      const index_t row = L.plan.send_ids[std::size_t(q)];
      for (index_t e = p_ptr[std::size_t(row)]; e < p_ptr[std::size_t(row) + 1]; ++e) pv.send_ids.push_back(e);
    }
    pv.send_ptr.push_back(index_t(pv.send_ids.size()));
  }
  pv.recv_rank = L.plan.recv_rank;
  pv.recv_ptr.assign(1, 0);
  for (std::size_t k = 0; k + 1 < L.plan.recv_ptr.size(); ++k) {
    index_t values = 0;
    for (index_t g = L.plan.recv_ptr[k]; g < L.plan.recv_ptr[k + 1]; ++g) values += ghost_len[std::size_t(g)];
    pv.recv_ptr.push_back(pv.recv_ptr.back() + values);
  }
  L.pv = std::make_unique<dist::HaloChannel>(exec_, comm_, pv, 1);

  // Galerkin: A_c = R (A P_ext), owned coarse rows in local form.
  Matrix Ac;
  L.ap_plan = ops_->product_symbolic(L.A.ref(), L.Pext.ref(), L.AP);
  L.rap_plan = ops_->product_symbolic(L.R.ref(), L.AP.ref(), Ac);
  L.rho = Array<double>(exec_, 1);
  auto C = std::make_unique<DistLevel>(std::move(cmap));
  C->plan = dist::HaloPlan::build(*comm_, C->map);
  C->halo = std::make_unique<dist::HaloChannel>(exec_, comm_, C->plan, 1);
  C->A = std::move(Ac);
  levels_.push_back(std::move(C));
}

void DistHierarchy::numeric_level(int l)
{
  DistLevel& L = *levels_[std::size_t(l)];
  DistLevel& C = *levels_[std::size_t(l) + 1];
  const bool refresh_p = !(opt_.keep_interpolation && L.p_ready);
  if (L.smoothed && refresh_p) {
    // P = (I - omega D^-1 A_f) P0 with A_f the owned columns of A, each row's ghost couplings lumped onto its
    // diagonal, and D, omega those of A: P's row sums are those of the smoothing with the whole A, so constants stay
    // interpolated at the subdomain boundary. Measured on the test's heterogeneous slabs (2 ranks, one seed, 8
    // solves): dropping the ghost couplings cost CG 1.24x the serial iterations; lumping them 1.07x, but with D_f
    // (the lumped diagonal) the coarse operator's D^-1 A reached 3.9 (serial 1.6), where the cycle's Jacobi
    // smoother (omega 2/3) diverges (CG broke down); with A's D: 1.10x and at most 2.0.
    const index_t n = L.owned();
    if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
      kernels::cuda::lump_ghost_columns(exec_->stream(), n, n, L.A.row_ptr.data(), L.A.col_ind.data(),
                                        L.A.values.data(), L.Af.data());
#endif
    } else {
      kernels::cpu::lump_ghost_columns(n, n, L.A.row_ptr.data(), L.A.col_ind.data(), L.A.values.data(), L.Af.data());
    }
    const CsrRef Af = with_values(L.A.ref(), L.Af.data());
    ops_->jacobi_radius_bound_into(L.A.ref(), L.rho.data());
    ops_->product_numeric(*L.ap0_plan, Af, L.P0.ref(), L.P);
    ops_->smoothed_prolongation_from(L.A.ref(), L.agg, L.rho.data(), L.P);
  }
  if (refresh_p) {
    ops_->transpose_numeric(*L.r_plan, L.P, L.R);
    const std::size_t np = L.P.values.size();
    if (np) exec_->copy(L.Pext.values.data(), L.P.values.data(), np * sizeof(double));
    L.pv->start(L.P.values.data(), L.Pext.values.data() + np);
    L.pv->finish();
  }
  L.p_ready = true;
  ops_->product_numeric(*L.ap_plan, L.A.ref(), L.Pext.ref(), L.AP);
  ops_->product_numeric(*L.rap_plan, L.R.ref(), L.AP.ref(), C.A);
}

void DistHierarchy::gather_symbolic(int l)
{
  gathered_at_ = l;
  const DistLevel& L = *levels_[std::size_t(l)];
  const index_t n = L.owned();
  const std::vector<index_t> rp = L.A.row_ptr.to_host(), ci = L.A.col_ind.to_host();
  std::vector<gindex_t> len(static_cast<std::size_t>(n)), gcol(ci.size());
  for (index_t i = 0; i < n; ++i) len[std::size_t(i)] = rp[std::size_t(i) + 1] - rp[std::size_t(i)];
  for (std::size_t q = 0; q < ci.size(); ++q) gcol[q] = L.map.global(ci[q]);
  const std::vector<gindex_t> rows = comm_->allgatherv(L.map.owned_globals());
  const std::vector<gindex_t> lens = comm_->allgatherv(std::span<const gindex_t>(len));
  const std::vector<gindex_t> cols = comm_->allgatherv(std::span<const gindex_t>(gcol));
  const auto N = index_t(rows.size());
  // The level's rows must be numbered 0 .. N-1 over all ranks (grid cells, or the aggregates in rank order).
  std::vector<index_t> where(std::size_t(N), -1);  // global id -> gathered row
  for (index_t k = 0; k < N; ++k) {
    const gindex_t g = rows[std::size_t(k)];
    if (g < 0 || g >= N || where[std::size_t(g)] >= 0)
      throw std::invalid_argument("DistHierarchy: the gathered level's rows are not numbered 0 .. N-1");
    where[std::size_t(g)] = k;
  }
  std::vector<std::size_t> start(std::size_t(N) + 1, 0);  // gathered row k's first entry
  for (index_t k = 0; k < N; ++k) start[std::size_t(k) + 1] = start[std::size_t(k)] + std::size_t(lens[std::size_t(k)]);
  BsrPattern p;
  p.nrows = p.ncols = N;
  p.row_ptr.assign(1, 0);
  whole_perm_.clear();
  std::vector<std::pair<gindex_t, index_t>> row;
  for (index_t g = 0; g < N; ++g) {
    const std::size_t k = std::size_t(where[std::size_t(g)]);
    row.clear();
    for (std::size_t q = start[k]; q < start[k + 1]; ++q) row.emplace_back(cols[q], index_t(q));
    std::sort(row.begin(), row.end());
    for (const auto& [c, q] : row) p.col_ind.push_back(index_t(c)), whole_perm_.push_back(q);
    p.row_ptr.push_back(index_t(p.col_ind.size()));
  }
  whole_rows_.assign(rows.begin(), rows.end());
  dcomm_ = exec_->is_cuda() ? dist::DeviceComm::of(comm_) : nullptr;
  if (dcomm_) {
    const gindex_t mine = n;
    const std::vector<gindex_t> counts = comm_->allgatherv(std::span<const gindex_t>(&mine, 1));
    gather_counts_.assign(counts.begin(), counts.end());
    whole_from_ = Array<index_t>(exec_, std::span<const index_t>(where));
    whole_all_ = Array<double>(exec_, size64_t(N));
  }
  own_rows_ = Array<index_t>(exec_, n);
  {
    std::vector<index_t> own(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) own[std::size_t(i)] = index_t(L.map.global(i));
    own_rows_.copy_from_host(own);
  }
  whole_.emplace(exec_, 1, p);
  whole_b_ = Vector(exec_, N);
  whole_x_ = Vector(exec_, N);
  // The finest level gathered: the serial preconditioner of the whole matrix, with its own reuse and cycles. A
  // coarse level: one cycle a visit, refreshed with every refresh of the levels above.
  AmgOptions t = opt_;
  if (l > 0) {
    t.cycles = 1;
    t.refresh_interval = 1;
    t.refresh_growth = 0.0;
    t.max_levels = std::max(1, opt_.max_levels - l);
    t.theta = opt_.theta * std::ldexp(1.0, -l);  // the strength threshold of level l, halving from there on
  }
  tail_ = std::make_unique<AmgPreconditioner>(exec_, t);
}

SetupStatus DistHierarchy::gather_numeric()
{
  const DistLevel& L = *levels_[std::size_t(gathered_at_)];
  const std::vector<double> mine = L.A.values.to_host();
  const std::vector<double> all = comm_->allgatherv(std::span<const double>(mine));
  std::vector<double> v(whole_perm_.size());
  for (std::size_t q = 0; q < v.size(); ++q) v[q] = all[std::size_t(whole_perm_[q])];
  whole_->values().copy_from_host(v);
  return tail_->setup(*whole_);
}

SetupStatus DistHierarchy::finish()
{
  SetupStatus status;
  const int nl = num_levels();
  if (status_.size() != size64_t(nl)) status_ = Array<index_t>(exec_, size64_t(nl));
  for (int l = 0; l < nl; ++l) {
    DistLevel& L = *levels_[std::size_t(l)];
    const index_t n = L.owned();
    const size64_t ext = size64_t(L.map.size());
    if (L.x.size() != ext) {
      L.x = Array<double>(exec_, ext);
      L.t = Array<double>(exec_, ext);
      L.b = Array<double>(exec_, n);
      L.r = Array<double>(exec_, n);
    }
    if (l == gathered_at_) continue;  // no smoother: the gathered hierarchy solves it
    ops_->jacobi_scaling_into(L.A.ref(), opt_.jacobi_omega, opt_.smoother == AmgSmoother::l1_jacobi, L.dinv,
                              status_.data() + l);
    if (opt_.storage == StoragePrecision::fp32) {
      auto narrow = [&](const Matrix& M, Array<float>& m32) {
        if (m32.size() != M.values.size()) m32 = Array<float>(exec_, M.values.size());
        ops_->to_fp32(M.values.size(), M.values.data(), m32.data());
      };
      if (l > 0) narrow(L.A, L.A32);  // level 0's copy is made with its values (fine_values)
      if (l + 1 < nl) narrow(L.P, L.P32), narrow(L.R, L.R32);
    }
  }
  // Every smoothed level's first bad row in one copy (the one wait of a numeric setup before the gather).
  const std::vector<index_t> st = status_.to_host();
  for (int l = 0; l < nl && status.ok; ++l) {
    if (l == gathered_at_) break;
    const index_t bad = st[std::size_t(l)];
    if (bad != INT_MAX)
      status = {false, fmt::format("AMG level {} (rank {}): row {} has a zero or non-finite smoother scaling", l,
                                   comm_->rank(), bad),
                ""};
  }
  if (status.ok && tail_) {
    status = gather_numeric();
    if (!status.ok) status.message = fmt::format("AMG levels gathered from level {}: {}", gathered_at_, status.message);
  }
  if (!comm_->all(status.ok) && status.ok) status = {false, "AMG: the setup failed on another rank", ""};
  return status;
}

SetupStatus DistHierarchy::refresh_numeric(const dist::DistBsrMatrix& A)
{
  if (!same_structure(A))
    throw std::invalid_argument("DistHierarchy::refresh_numeric: not the matrix of the last full setup");
  fine_values(A);
  const int last = gathered_at_ >= 0 ? gathered_at_ : num_levels() - 1;
  for (int l = 0; l < last; ++l) numeric_level(l);
  return finish();
}

void DistHierarchy::keep(const dist::DistBsrMatrix& A)
{
  if (!same_structure(A)) throw std::invalid_argument("DistHierarchy::keep: not the matrix of the last full setup");
  fine_values(A);
  // The finest level gathered: the gathered matrix is the current one, and the serial hierarchy keeps or
  // refreshes as it decides itself (it has the same feedback).
  if (gathered_at_ == 0 && !comm_->all(gather_numeric().ok))
    throw std::runtime_error("AMG: a kept hierarchy failed its gathered setup");
}

void DistHierarchy::note_new_step()
{
  if (tail_ && gathered_at_ == 0) tail_->note_new_step();
}

void DistHierarchy::note_solve(int iterations, bool converged)
{
  if (tail_ && gathered_at_ == 0) tail_->note_solve(iterations, converged);
}

void DistHierarchy::statistics(AmgStatistics& s) const
{
  s.levels = dist_stats_;
  s.coarsest_direct = false;
  if (tail_) {
    const AmgStatistics& t = tail_->statistics();
    s.levels.insert(s.levels.end(), t.levels.begin(), t.levels.end());
    s.coarsest_direct = t.coarsest_direct;
  }
  double nnz = 0.0, rows = 0.0;
  for (const AmgLevelStatistics& l : s.levels) nnz += l.nnz, rows += l.rows;
  s.operator_complexity = s.levels.empty() || s.levels[0].nnz == 0 ? 1.0 : nnz / s.levels[0].nnz;
  s.grid_complexity = s.levels.empty() || s.levels[0].rows == 0 ? 1.0 : rows / s.levels[0].rows;
  s.plain_fallbacks = plain_fallbacks_ + (tail_ ? tail_->statistics().plain_fallbacks : 0);
}

DistHierarchy::HostLevel DistHierarchy::level_host(int l) const
{
  const DistLevel& L = *levels_.at(std::size_t(l));
  HostLevel h;
  h.owned.assign(L.map.owned_globals().begin(), L.map.owned_globals().end());
  h.a_ptr = L.A.row_ptr.to_host();
  const std::vector<index_t> ac = L.A.col_ind.to_host();
  for (index_t c : ac) h.a_col.push_back(L.map.global(c));
  h.a_val = L.A.values.to_host();
  if (l + 1 < num_levels()) {
    const DistLevel& C = *levels_[std::size_t(l) + 1];
    h.p_ptr = L.P.row_ptr.to_host();
    for (index_t c : L.P.col_ind.to_host()) h.p_col.push_back(C.map.global(c));
    h.p_val = L.P.values.to_host();
  }
  return h;
}

CycleRef DistHierarchy::op(const DistLevel& L) const
{
  if (opt_.storage != StoragePrecision::fp32) return L.A.ref();
  return {L.A.ref(), L.A32.data()};
}

CycleRef DistHierarchy::transfer(const Matrix& M, const Array<float>& m32) const
{
  if (opt_.storage != StoragePrecision::fp32) return M.ref();
  return {M.ref(), m32.data()};
}

void DistHierarchy::exchange(const DistLevel& L, double* x) const
{
  L.halo->start(x, x + L.owned());
  L.halo->finish();
}

void DistHierarchy::cycle(int l, bool zero_guess) const
{
  const DistLevel& L = *levels_[std::size_t(l)];
  const index_t n = L.owned();
  if (l == gathered_at_) {
    // x = the gathered hierarchy's solve of b (zero_guess), or x += its solve of the residual (a W-cycle's second
    // visit); every rank solves the whole level and keeps its rows.
    const double* rhs = L.b.data();
    if (!zero_guess) {
      exchange(L, L.x.data());
      ops_->residual(op(L), L.b.data(), L.x.data(), L.r.data());
      rhs = L.r.data();
    }
    if (dcomm_) {  // device to device, no wait of the host
#if BLOCKRES_HAVE_CUDA
      dcomm_->allgatherv(rhs, gather_counts_, whole_all_.data(), exec_->stream());
      kernels::cuda::halo_pack(exec_->stream(), whole_all_.data(), whole_from_.data(), index_t(whole_from_.size()), 1,
                               whole_b_.data());
#endif
    } else {
      std::vector<double> mine(static_cast<std::size_t>(n));
      if (n) exec_->copy_to_host(mine.data(), rhs, mine.size() * sizeof(double));
      const std::vector<double> all = comm_->allgatherv(std::span<const double>(mine));
      std::vector<double> wb(all.size());
      for (std::size_t k = 0; k < all.size(); ++k) wb[std::size_t(whole_rows_[k])] = all[k];
      whole_b_.copy_from_host(wb);
    }
    tail_->apply(whole_b_, whole_x_);
    double* out = zero_guess ? L.x.data() : L.t.data();
    if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
      kernels::cuda::halo_pack(exec_->stream(), whole_x_.data(), own_rows_.data(), n, 1, out);
#endif
    } else {
      kernels::cpu::halo_pack(whole_x_.data(), own_rows_.data(), n, 1, out);
    }
    if (!zero_guess) {
      Vector x = Vector::view(exec_, L.x.data(), size64_t(n));
      const Vector c = Vector::view(exec_, L.t.data(), size64_t(n));
      axpby(1.0, c, 1.0, x);
    }
    return;
  }
  const CycleRef A = op(L);
  // One sweep x_out = x_in + dinv (b - A x_in): the ghosts of x_in first (a sweep from zero reads no x).
  auto sweep = [&](double* x_in, double* x_out) {
    if (x_in) exchange(L, x_in);
    ops_->jacobi_sweep(A, L.dinv.data(), L.b.data(), x_in, x_out);
  };
  auto smooth = [&](int sweeps, bool from_zero) { amg::smooth(sweeps, from_zero, L.x, L.t, sweep); };
  if (l == num_levels() - 1) {  // coarsening stopped above gather_rows: smoothing only
    smooth(std::max(2, opt_.pre_sweeps + opt_.post_sweeps), zero_guess);
    return;
  }
  if (opt_.pre_sweeps > 0) smooth(opt_.pre_sweeps, zero_guess);
  else if (zero_guess) fill(L.x, 0.0);
  exchange(L, L.x.data());
  ops_->residual(A, L.b.data(), L.x.data(), L.r.data());
  const DistLevel& C = *levels_[std::size_t(l) + 1];
  ops_->spmv(transfer(L.R, L.R32), 1.0, L.r.data(), 0.0, C.b.data());
  cycle(l + 1, true);
  // W-cycle: the coarse level once more from its first result (pointless when it is solved exactly: the gathered
  // level factored directly).
  const bool coarse_exact = l + 1 == gathered_at_ && tail_->num_levels() == 1 && tail_->statistics().coarsest_direct;
  if (opt_.cycle == AmgCycle::w && !coarse_exact) cycle(l + 1, false);
  ops_->spmv(transfer(L.P, L.P32), 1.0, C.x.data(), 1.0, L.x.data());
  smooth(opt_.post_sweeps, false);
}

void DistHierarchy::apply(const Vector& r, Vector& z) const
{
  if (levels_.empty()) throw std::logic_error("DistHierarchy::apply before setup");
  const DistLevel& L0 = *levels_[0];
  const size64_t n = size64_t(L0.owned());
  if (r.size() != n || z.size() != n)
    throw std::invalid_argument("AmgPreconditioner::apply: vector size differs from the owned rows");
  if (n) exec_->copy(L0.b.data(), r.data(), n * sizeof(double));
  // The finest level gathered: the serial preconditioner's apply is the whole (all its cycles).
  const int cycles = gathered_at_ == 0 ? 1 : opt_.cycles;
  for (int k = 0; k < cycles; ++k) cycle(0, k == 0);
  if (n) exec_->copy(z.data(), L0.x.data(), n * sizeof(double));
}

}  // namespace blockres::amg
