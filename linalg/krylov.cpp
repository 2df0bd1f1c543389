// CG, BiCGSTAB, GMRES(m), FGMRES(m) and IDR(s): backend-neutral algorithms over spmv, the
// vector ops and a preconditioner.
#include "linalg/krylov.hpp"

#include "linalg/allocation.hpp"
#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/phase_timer.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <random>
#include <span>
#include <stdexcept>

namespace blockres {

// ---- the solver object, profiling, and the per-solve context

KrylovSolver::KrylovSolver(ExecPtr exec, KrylovConfig config) : exec_(std::move(exec)), config_(config) {}
KrylovSolver::~KrylovSolver() = default;
KrylovSolver::KrylovSolver(KrylovSolver&&) noexcept = default;
KrylovSolver& KrylovSolver::operator=(KrylovSolver&&) noexcept = default;

const char* to_key(SolveReason r)
{
  switch (r) {
    case SolveReason::converged: return "converged";
    case SolveReason::max_iterations: return "max_iterations";
    case SolveReason::breakdown: return "breakdown";
    case SolveReason::not_finite: return "not_finite";
  }
  return "?";
}

std::string_view to_string(SolveReason r)
{
  switch (r) {
    case SolveReason::converged: return "converged";
    case SolveReason::max_iterations: return "maximum iterations reached";
    case SolveReason::breakdown: return "breakdown";
    case SolveReason::not_finite: return "NaN or Inf encountered";
  }
  return "?";
}

void KrylovSolver::set_profiling(bool on)
{
  profiling_ = on;
  if (on && !timer_) timer_ = std::make_unique<PhaseTimer>(*exec_);
}

// What every method needs in one place: A, M, the tolerance, the status, and the products with A
// and M (timed and counted when profiling, M skipped when it is the identity).
// The matrix is a BsrMatrix, or a row-distributed DistBsrMatrix: then the vectors hold this rank's rows and every
// reduction's local result goes through the communicator (comm, only with more than one rank; with one rank every
// operation is the serial one, bit for bit).
struct KrylovSolver::Context {
  const BsrMatrix* A;
  const dist::DistBsrMatrix* D;
  const dist::Communicator* comm;
  const Preconditioner& M;
  PhaseTimer* timer;
  KrylovProfile& prof;
  size64_t n;  // this rank's scalar rows
  SolveStatus st;
  double target = 0.0;
  // Distributed on GPUs with NCCL: sums that stay in device memory (CGS2's) go device to device.
  std::shared_ptr<const dist::DeviceComm> dcomm = nullptr;

  void spmv(double a, const Vector& x, double b, Vector& y)
  {
    if (timer) timer->begin(PhaseTimer::spmv);
    if (D)
      D->apply(a, x, b, y);
    else
      blockres::spmv(*A, a, x, b, y);
    if (timer) timer->end(PhaseTimer::spmv);
    ++prof.spmv_count;
    prof.bytes += D ? D->diag().spmv_bytes(b != 0.0) + (D->offd() ? D->offd()->spmv_bytes(true) : 0.0)
                    : A->spmv_bytes(b != 0.0);
  }
  // `passes` passes over Krylov vectors of A's size (byte counting only).
  void vectors(double passes) { prof.bytes += passes * 8.0 * double(n); }

  // The reductions: vector_ops' local results, summed over the ranks (Communicator::sum) when distributed.
  void sum(double* v, int k) const
  {
    if (comm) comm->sum(std::span<double>(v, static_cast<std::size_t>(k)));
  }
  double sum(double v) const { return comm ? comm->sum(v) : v; }
  double dot(const Vector& x, const Vector& y) const { return sum(blockres::dot(x, y)); }
  double norm2(const Vector& x) const { return comm ? std::sqrt(sum(blockres::dot(x, x))) : blockres::norm2(x); }
  void dots(const Vector* const* xs, int k, const Vector& y, double* out) const
  {
    blockres::dots(xs, k, y, out);
    sum(out, k);
  }
  double axpby_norm2(double a, const Vector& x, double b, Vector& y) const
  {
    return sum(blockres::axpby_norm2(a, x, b, y));
  }
  double cg_update(double alpha, const Vector& p, const Vector& q, Vector& x, Vector& r) const
  {
    return sum(blockres::cg_update(alpha, p, q, x, r));
  }
  void bicgstab_update(double alpha, const Vector& ph, double omega, const Vector& sh, const Vector& s, const Vector& t,
                       const Vector& rh, Vector& x, Vector& r, double* out) const
  {
    blockres::bicgstab_update(alpha, ph, omega, sh, s, t, rh, x, r, out);
    sum(out, 2);
  }
  // CGS2 against V(:, 0:k) (vector_ops' cgs2). Distributed with a device communicator: the same passes (the three
  // fused ones on CUDA), each pass's sums over the ranks on the device before the next reads them; the host waits
  // once, as serially. Otherwise (a CPU executor, or GPUs without NCCL): the five products, each reduction summed
  // over the ranks on the host before it is used.
  void cgs2(const MultiVector& V, int k, Vector& w, double* h1, double* h2, double* nrm2, GemvKernel gk) const
  {
    if (!comm) {
      blockres::cgs2(V, k, w, h1, h2, nrm2, gk);
      return;
    }
    if (dcomm) {
      void* const s = V.exec().stream();
      blockres::cgs2(V, k, w, h1, h2, nrm2, gk, [&](double* v, int count) { dcomm->sum(v, count, s); });
      return;
    }
    gemv_t(V, k, w, h1, gk);
    sum_in_executor(V.exec(), h1, k);
    gemv_n(-1.0, V, k, h1, 1.0, w, gk);
    gemv_t(V, k, w, h2, gk);
    sum_in_executor(V.exec(), h2, k);
    gemv_n(-1.0, V, k, h2, 1.0, w, gk);
    const double n2 = dot(w, w);
    V.exec().copy_from_host(nrm2, &n2, sizeof(double));
  }
  // sum() on k values in the executor's memory (CUDA: through the host, the MPI is not CUDA-aware).
  void sum_in_executor(const Executor& e, double* v, int k) const
  {
    if (!e.is_cuda()) {
      sum(v, k);
      return;
    }
    std::vector<double> h(static_cast<std::size_t>(k));
    e.copy_to_host(h.data(), v, h.size() * sizeof(double));
    sum(h.data(), k);
    e.copy_from_host(v, h.data(), h.size() * sizeof(double));
  }
  // z = M^{-1} r; returns r itself for the identity (z untouched).
  const Vector& precond(const Vector& r, Vector& z)
  {
    if (M.is_identity()) return r;
    if (timer) timer->begin(PhaseTimer::precond);
    M.apply(r, z);
    if (timer) timer->end(PhaseTimer::precond);
    ++prof.precond_count;
    if (const double b = M.apply_bytes(); b > 0.0) prof.bytes += b;
    else ++prof.precond_unstated;
    return z;
  }
  void orth_begin() { if (timer) timer->begin(PhaseTimer::orthogonalization); }
  void orth_end() { if (timer) timer->end(PhaseTimer::orthogonalization); }
  // r = b - A x; returns ||r||.
  double residual(const Vector& b, const Vector& x, Vector& r)
  {
    copy(b, r);
    spmv(-1.0, x, 1.0, r);
    vectors(3.0);  // the copy and the norm
    return norm2(r);
  }
  // Ends the solve on the explicit residual: converged when it meets the target, else `otherwise`.
  SolveStatus conclude(const Vector& b, const Vector& x, Vector& r, SolveReason otherwise)
  {
    st.residual = residual(b, x, r);
    st.converged = st.residual <= target;
    st.reason = !std::isfinite(st.residual) ? SolveReason::not_finite
                : st.converged              ? SolveReason::converged
                                            : otherwise;
    return st;
  }
  SolveStatus fail(SolveReason why)
  {
    st.converged = false;
    st.reason = why;
    return st;
  }
  // The initial residual and the target; false when the solve is over already (st says why).
  bool start(const Vector& b, const Vector& x, Vector& r, const KrylovConfig& cfg)
  {
    const double r0 = residual(b, x, r);
    st.initial_residual = st.residual = r0;
    if (!std::isfinite(r0)) return fail(SolveReason::not_finite), false;
    double ref = r0;
    if (cfg.reference == ToleranceReference::rhs) {
      const double bn = norm2(b);
      if (!std::isfinite(bn)) return fail(SolveReason::not_finite), false;
      if (bn > 0.0) ref = bn;  // b = 0: relative to the initial residual instead
    }
    target = std::max(cfg.rel_tol * ref, cfg.abs_tol);
    if (r0 <= target) {
      st.converged = true;
      st.reason = SolveReason::converged;
      return false;
    }
    return true;
  }
};

void KrylovSolver::ensure_workspace(size64_t n, int nvec)
{
  const AllocationLabel label("the Krylov vectors and bases");
  if (static_cast<int>(work_.size()) >= nvec && !work_.empty() && work_.front().size() == n) return;
  work_.clear();
  for (int i = 0; i < nvec; ++i) work_.emplace_back(exec_, n);
}

void KrylovSolver::ensure_bases(size64_t n, int m, bool flexible)
{
  const AllocationLabel label("the Krylov vectors and bases");
  if (!basis_v_ || basis_v_->rows() != n || basis_m_ != m) {
    basis_v_.reset();
    basis_z_.reset();
    basis_v_ = std::make_unique<MultiVector>(exec_, n, std::min(m + 1, basis_chunk));
    gs_scratch_ = Array<double>(exec_, 2 * size64_t(m + 2) + 1);  // cgs2: 2 (m + 1) + 1; dcgs2: 2 (m + 2)
    basis_m_ = m;
  }
  if (flexible && !basis_z_) basis_z_ = std::make_unique<MultiVector>(exec_, n, std::min(m, basis_chunk));
}

void KrylovSolver::grow_bases(int j, bool flexible)
{
  const AllocationLabel label("the Krylov vectors and bases");
  const auto grow = [](MultiVector& B, int need, int most) {
    if (B.cols() < need) B.grow(std::min(most, (need + basis_chunk - 1) / basis_chunk * basis_chunk));
  };
  grow(*basis_v_, j + 2, basis_m_ + 1);
  if (flexible) grow(*basis_z_, j + 1, basis_m_);
}

SolveStatus KrylovSolver::solve(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x)
{
  if (b.size() != A.scalar_rows() || x.size() != b.size())
    throw std::invalid_argument("KrylovSolver::solve: vector sizes do not match the matrix");
  Context c{&A, nullptr, nullptr, M, profiling_ ? timer_.get() : nullptr, profile_, b.size(), {}, 0.0};
  return solve(c, b, x);
}

SolveStatus KrylovSolver::solve(const dist::DistBsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x)
{
  const size64_t n = size64_t(A.map().owned()) * A.block_size();
  if (b.size() != n || x.size() != b.size())
    throw std::invalid_argument("KrylovSolver::solve: vector sizes do not match this rank's rows of the matrix");
  const bool distributed = A.comm().size() > 1;
  Context c{nullptr, &A, distributed ? &A.comm() : nullptr, M, profiling_ ? timer_.get() : nullptr, profile_, n, {}, 0.0};
  if (distributed && exec_->is_cuda()) c.dcomm = dist::DeviceComm::of(A.comm_ptr());  // collective: every rank solves
  return solve(c, b, x);
}

SolveStatus KrylovSolver::solve(Context& c, const Vector& b, Vector& x)
{
  if (config_.method == KrylovMethod::idr && (config_.idr_s < 1 || config_.idr_s > max_idr_s))
    throw std::invalid_argument("KrylovSolver::solve: IDR(s) needs 1 <= s <= " + std::to_string(max_idr_s) +
                                ", got s = " + std::to_string(config_.idr_s));
  if (config_.restart < 1 &&
      (config_.method == KrylovMethod::gmres || config_.method == KrylovMethod::fgmres))
    throw std::invalid_argument("KrylovSolver::solve: GMRES(m) needs m >= 1");
  const auto t0 = std::chrono::steady_clock::now();
  SolveStatus st;
  switch (config_.method) {
    case KrylovMethod::cg: st = cg(c, b, x); break;
    case KrylovMethod::bicgstab: st = bicgstab(c, b, x); break;
    case KrylovMethod::gmres:
    case KrylovMethod::fgmres: {
      const bool flexible = config_.method == KrylovMethod::fgmres;
      st = config_.orthogonalization == Orthogonalization::dcgs2 ? gmres_dcgs2(c, b, x, flexible)
                                                                 : gmres(c, b, x, flexible);
      break;
    }
    case KrylovMethod::idr: st = idr(c, b, x); break;
  }
  // The vector passes of CG, BiCGSTAB and IDR(s) per iteration, as bytes_per_iteration counts them
  // without its products with A (counted as they ran); GMRES and FGMRES count theirs in the loop.
  if (config_.method == KrylovMethod::cg || config_.method == KrylovMethod::bicgstab ||
      config_.method == KrylovMethod::idr) {
    const double vec = 8.0 * double(b.size());
    const double products = config_.method == KrylovMethod::bicgstab ? 2.0 : 1.0;
    profile_.bytes += st.iterations * (bytes_per_iteration(config_, b.size(), 0.0) - products * 2.0 * vec);
  }
  if (profiling_) {
    exec_->synchronize();
    std::array<double, PhaseTimer::num_phases> sec{};
    timer_->collect(sec);
    profile_.spmv_seconds += sec[PhaseTimer::spmv];
    profile_.precond_seconds += sec[PhaseTimer::precond];
    profile_.orthogonalization_seconds += sec[PhaseTimer::orthogonalization];
    profile_.total_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  ++profile_.solves;
  profile_.iterations += st.iterations;
  return st;
}

// Preconditioned CG (Hestenes–Stiefel) for symmetric positive definite A and M. Per iteration:
// q = A p, p.q, then one fused pass x += alpha p, r -= alpha q returning ||r||^2, then
// z = M^{-1} r, rho = r.z (||r||^2 itself when M = I) and p = z + beta p.
// Breakdown: p.q <= 0 (A not positive definite on the Krylov space) or r.z <= 0 with r != 0
// (M not positive definite). A recurrence residual below the target that the explicit residual
// does not confirm restarts the method from the explicit residual.
// Bytes per iteration (M = I): SpMV + p update (3 vectors) + p.q (2) + fused update (6).
SolveStatus KrylovSolver::cg(Context& c, const Vector& b, Vector& x)
{
  ensure_workspace(b.size(), 4);
  Vector &r = work_[0], &z = work_[1], &p = work_[2], &q = work_[3];
  SolveStatus& st = c.st;
  if (!c.start(b, x, r, config_)) return st;
  const bool identity = c.M.is_identity();
  while (st.iterations < config_.max_iterations) {
    const Vector& z0 = c.precond(r, z);
    double rho = identity ? st.residual * st.residual : c.dot(r, z0);
    if (!std::isfinite(rho)) return c.fail(SolveReason::not_finite);
    if (rho <= 0.0) return c.conclude(b, x, r, SolveReason::breakdown);
    copy(z0, p);
    bool small = false;
    while (st.iterations < config_.max_iterations) {
      c.spmv(1.0, p, 0.0, q);
      const double pq = c.dot(p, q);
      if (!std::isfinite(pq)) return c.fail(SolveReason::not_finite);
      if (pq <= 0.0) return c.conclude(b, x, r, SolveReason::breakdown);
      const double alpha = rho / pq;
      const double rr = c.cg_update(alpha, p, q, x, r);
      ++st.iterations;
      if (!std::isfinite(rr)) return c.fail(SolveReason::not_finite);
      if (std::sqrt(rr) <= c.target) {
        small = true;
        break;
      }
      const Vector& zk = c.precond(r, z);
      const double rho_new = identity ? rr : c.dot(r, zk);
      if (!std::isfinite(rho_new)) return c.fail(SolveReason::not_finite);
      if (rho_new <= 0.0) return c.conclude(b, x, r, SolveReason::breakdown);
      axpby(1.0, zk, rho_new / rho, p);
      rho = rho_new;
    }
    c.conclude(b, x, r, SolveReason::max_iterations);
    if (st.converged || !std::isfinite(st.residual) || !small) return st;
    // The recurrence claimed a residual the explicit one does not confirm: restart from r.
  }
  return c.conclude(b, x, r, SolveReason::max_iterations);
}

// BiCGSTAB (van der Vorst), right preconditioned. Per iteration, with fused kernels:
//   p = r + beta (p - omega v)                       axpbypcz            4 vectors
//   v = A M^{-1} p;  r^.v                            SpMV, dot           2
//   s = r - alpha v with ||s||^2 (in place in r)     axpby_norm2         3
//   t = A M^{-1} s;  t.t, t.s                         SpMV, dots          2
//   x += alpha p^ + omega s^; r = s - omega t with ||r||^2, r^.r   bicgstab_update 7
// so an unpreconditioned iteration moves 2 SpMVs + 18 vectors; r^.r for the next rho comes
// with the last pass. Restarts with a fresh shadow residual r^ = r (the true residual)
// whenever the recurrence breaks down (r^.r = 0 or r^.v = 0 after progress, e.g. when r^ was
// supported on a few equations that decouple from the rest) or claims convergence the
// explicit residual does not confirm. A breakdown in the first iteration after a restart is final.
SolveStatus KrylovSolver::bicgstab(Context& c, const Vector& b, Vector& x)
{
  ensure_workspace(b.size(), 7);
  Vector &r = work_[0], &rhat = work_[1], &p = work_[2], &v = work_[3], &phat_buf = work_[4], &shat_buf = work_[5],
         &t = work_[6];
  SolveStatus& st = c.st;
  if (!c.start(b, x, r, config_)) return st;
  double rnorm = st.residual;

  while (st.iterations < config_.max_iterations) {
    copy(r, rhat);
    double rho = rnorm * rnorm, rho_old = 1.0, alpha = 1.0, omega = 1.0;
    bool final_breakdown = false;
    for (int k = 0; st.iterations < config_.max_iterations; ++k) {
      if (!std::isfinite(rho)) return c.fail(SolveReason::not_finite);
      if (rho == 0.0) {
        final_breakdown = k == 0;
        break;
      }
      if (k == 0)
        copy(r, p);
      else
        axpbypcz(1.0, r, -(rho / rho_old) * alpha, v, (rho / rho_old) * (alpha / omega), p);  // p = r + beta (p - omega v)
      const Vector& phat = c.precond(p, phat_buf);
      c.spmv(1.0, phat, 0.0, v);
      const double rv = c.dot(rhat, v);
      if (!std::isfinite(rv)) return c.fail(SolveReason::not_finite);
      if (rv == 0.0) {
        final_breakdown = k == 0;
        break;
      }
      alpha = rho / rv;
      const double ss = c.axpby_norm2(-alpha, v, 1.0, r);  // r <- s = r - alpha v
      ++st.iterations;
      if (!std::isfinite(ss)) return c.fail(SolveReason::not_finite);
      if (std::sqrt(ss) <= c.target) {
        axpby(alpha, phat, 1.0, x);
        break;
      }
      const Vector& shat = c.precond(r, shat_buf);
      c.spmv(1.0, shat, 0.0, t);
      double tt_ts[2];
      const Vector* tv[2] = {&t, &r};
      c.dots(tv, 2, t, tt_ts);
      const double tt = tt_ts[0];
      if (!std::isfinite(tt) || !std::isfinite(tt_ts[1])) return c.fail(SolveReason::not_finite);
      omega = tt > 0.0 ? tt_ts[1] / tt : 0.0;
      if (omega == 0.0) {  // r = s; the next r^.r would vanish: restart
        axpby(alpha, phat, 1.0, x);
        break;
      }
      double out[2];
      c.bicgstab_update(alpha, phat, omega, shat, r, t, rhat, x, r, out);  // x += alpha p^ + omega s^; r = s - omega t
      rnorm = std::sqrt(out[0]);
      if (!std::isfinite(rnorm) || !std::isfinite(out[1])) return c.fail(SolveReason::not_finite);
      if (rnorm <= c.target) break;
      rho_old = rho;
      rho = out[1];
    }
    c.conclude(b, x, r, SolveReason::max_iterations);
    rnorm = st.residual;
    if (st.converged || !std::isfinite(st.residual)) return st;
    if (final_breakdown) return c.fail(SolveReason::breakdown);
  }
  return c.fail(SolveReason::max_iterations);
}

namespace {

// Column j of a Hessenberg matrix (col[0..j+1]) reduced by the Givens rotations 0..j-1 already made,
// then rotation j made from it and applied to the right-hand side g: col[j] becomes the diagonal entry
// of R, col[j+1] zero. False, with nothing but the old rotations applied, when the column's last two
// entries are both zero (no rotation exists).
bool givens_column(double* col, int j, std::vector<double>& cs, std::vector<double>& sn, std::vector<double>& g)
{
  for (int i = 0; i < j; ++i) {
    const double t = cs[i] * col[i] + sn[i] * col[i + 1];
    col[i + 1] = -sn[i] * col[i] + cs[i] * col[i + 1];
    col[i] = t;
  }
  const double d = std::hypot(col[j], col[j + 1]);
  if (d == 0.0) return false;
  cs[j] = col[j] / d;
  sn[j] = col[j + 1] / d;
  col[j] = d;
  col[j + 1] = 0.0;
  g[j + 1] = -sn[j] * g[j];
  g[j] = cs[j] * g[j];
  return true;
}

// y = R^{-1} g on the first j columns of the upper triangle R (column-major, leading dimension ld).
void back_substitute(const std::vector<double>& R, std::size_t ld, const std::vector<double>& g, int j,
                     std::vector<double>& y)
{
  for (int i = j - 1; i >= 0; --i) {
    double s = g[i];
    for (int k = i + 1; k < j; ++k) s -= R[std::size_t(k) * ld + i] * y[k];
    y[i] = s / R[std::size_t(i) * ld + i];
  }
}

}  // namespace

// After a GMRES cycle's update of x: the explicit residual into beta; true when the solve ends here
// (a non-finite residual, or a breakdown that did not converge; c.st says why).
bool KrylovSolver::gmres_cycle_end(Context& c, const Vector& b, Vector& x, bool breakdown, double& beta)
{
  c.conclude(b, x, work_[0], SolveReason::max_iterations);
  beta = c.st.residual;
  if (!std::isfinite(beta)) return true;
  if (breakdown && !c.st.converged) return c.fail(SolveReason::breakdown), true;
  return false;
}

// The end of a GMRES cycle of j steps, y (j coefficients, executor memory): x += Z y (FGMRES),
// x += V y (no preconditioner) or x += M^{-1} (V y) (GMRES; work_ as scratch).
void KrylovSolver::gmres_update(Context& c, int j, const double* y, bool flexible, GemvKernel gk, Vector& x)
{
  Vector &r = work_[0], &z = work_[1];
  if (flexible) {
    gemv_n(1.0, *basis_z_, j, y, 1.0, x, gk);
    c.vectors(j + 2.0);
  } else if (c.M.is_identity()) {
    gemv_n(1.0, *basis_v_, j, y, 1.0, x, gk);
    c.vectors(j + 2.0);
  } else {
    gemv_n(1.0, *basis_v_, j, y, 0.0, r, gk);
    axpby(1.0, c.precond(r, z), 1.0, x);
    c.vectors(j + 1.0 + 3.0);
  }
}

// GMRES(m) and flexible GMRES(m) (Saad), right preconditioned, with classical Gram–Schmidt
// applied twice (CGS2) on the contiguous basis V (vector_ops' cgs2: on the device three fused passes
// by default, or cuBLAS / own GEMVs, KrylovConfig::gemv):
//   h1 = V^T w; w -= V h1; h2 = V^T w; w -= V h2; ||w||   (one host synchronisation)
// The Hessenberg matrix, its Givens rotations and the small triangular solve stay on the host.
// FGMRES keeps z_j = M^{-1} v_j in Z and updates x += Z y, so M may vary between iterations;
// GMRES forms x += M^{-1} (V y) once per cycle. Iteration j (k = j + 1 basis vectors) moves
// an SpMV plus 2 (2k + 3) vectors of Gram–Schmidt and 1 for the norm (3k + 5 for both when fused)
// and 2 for the scaling.
SolveStatus KrylovSolver::gmres(Context& c, const Vector& b, Vector& x, bool flexible)
{
  const int m = config_.restart;
  const bool identity = c.M.is_identity();
  flexible = flexible && !identity;  // with M = I, Z = V
  ensure_workspace(b.size(), 2);
  ensure_bases(b.size(), m, flexible);
  Vector &r = work_[0], &z = work_[1];
  MultiVector& V = *basis_v_;
  const size64_t m1 = m + 1;
  double* hd = gs_scratch_.data();  // h1 (m + 1), h2 (m + 1), ||w||^2, in the executor's memory

  SolveStatus& st = c.st;
  if (!c.start(b, x, r, config_)) return st;
  double beta = st.residual;

  std::vector<double> H(static_cast<std::size_t>(m1 * m)), cs(m), sn(m), g(m1), y(m), hh(2 * m1 + 1);
  auto h = [&](int i, int j) -> double& { return H[static_cast<std::size_t>(j * m1 + i)]; };
  Array<double> yd(exec_, m);

  while (beta > c.target && st.iterations < config_.max_iterations) {
    axpby(1.0 / beta, r, 0.0, V.col(0));
    c.vectors(2.0);
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;
    int j = 0;
    bool breakdown = false;
    for (; j < m && st.iterations < config_.max_iterations; ++j) {
      grow_bases(j, flexible);
      Vector& w = V.col(j + 1);
      c.spmv(1.0, flexible ? c.precond(V.col(j), basis_z_->col(j)) : c.precond(V.col(j), z), 0.0, w);
      c.orth_begin();
      const int k = j + 1;
      const GemvKernel gk = config_.gemv;
      c.cgs2(V, k, w, hd, hd + m1, hd + 2 * m1, gk);
      exec_->copy_to_host(hh.data(), hd, sizeof(double) * hh.size());
      for (int i = 0; i <= j; ++i) h(i, j) = hh[i] + hh[m1 + i];
      const double hn = std::sqrt(hh[2 * m1]);
      ++st.iterations;
      // CGS2 2 (2k + 3) and the norm 1, or 3k + 5 fused (kernels::cuda::cgs2); the scaling 2
      c.vectors((cgs2_is_fused(*exec_, k, gk) ? 3.0 * k + 5.0 : 4.0 * k + 7.0) + 2.0);
      if (!std::isfinite(hn) || !std::all_of(hh.begin(), hh.begin() + k, [](double e) { return std::isfinite(e); }) ||
          !std::all_of(hh.begin() + m1, hh.begin() + m1 + k, [](double e) { return std::isfinite(e); })) {
        c.orth_end();
        return c.fail(SolveReason::not_finite);
      }
      h(j + 1, j) = hn;
      // Apply previous Givens rotations to the new column, then make a new one.
      if (!givens_column(&h(0, j), j, cs, sn, g)) {
        c.orth_end();
        breakdown = true;
        break;
      }
      if (hn == 0.0 || std::abs(g[j + 1]) <= c.target) {
        c.orth_end();
        ++j;
        break;
      }
      axpby(1.0 / hn, w, 0.0, w);
      c.orth_end();
    }
    // x += M^{-1} (V y) (GMRES) or x += Z y (FGMRES) with H y = g (upper triangular after the rotations).
    back_substitute(H, std::size_t(m1), g, j, y);
    if (j > 0) {
      yd.copy_from_host(std::span<const double>(y.data(), static_cast<std::size_t>(m)));
      gmres_update(c, j, yd.data(), flexible, config_.gemv, x);
    }
    if (gmres_cycle_end(c, b, x, breakdown, beta)) return st;
  }
  st.converged = beta <= c.target;
  st.reason = st.converged ? SolveReason::converged : SolveReason::max_iterations;
  return st;
}

// GMRES(m) and FGMRES(m) with DCGS2 (Orthogonalization::dcgs2). Iteration j (v_0 .. v_{j-1} final,
// v_j orthogonalised once and normalised by Pythagoras, w = A M^{-1} v_j in column j + 1):
//   G = V(:, 0:j+2)^T [v_j, w]                       one product, one host synchronisation
//   s = V_{j-1}^T v_j, rho = sqrt(v_j.v_j - s.s)     v_j's delayed second pass ...
//   [v_j, w] -= V_{j-1} [s, c], v_j /= rho           ... and w's first, in one two-column update
//   H(:, j-1) corrected: H(i, j-1) += H(j, j-1) s_i, H(j, j-1) *= rho (A z_{j-1} in the final basis)
//   h_j = (v_j.w - s.c) / rho, w -= h_j v_j, ||w||^2 = w.w - c.c - h_j^2 (an explicit norm when
//   that cancels below 1e-8 of w.w), w /= ||w||.
// The residual estimate comes from the Givens QR of H(:, 0:j+1) with column j provisional (its
// correction is O(eps) relative); a cycle that ends (estimate met, m steps, iteration limit) first
// finishes v_{j+1}'s second pass coefficients (one more product and synchronisation), corrects
// column j and decides again. FGMRES keeps z_j = M^{-1} of v_j as it was before its second pass: the
// Arnoldi relation A Z = V H holds for the corrected H whatever z_j is, so Z needs no update.
SolveStatus KrylovSolver::gmres_dcgs2(Context& c, const Vector& b, Vector& x, bool flexible)
{
  const int m = config_.restart;
  const bool identity = c.M.is_identity();
  flexible = flexible && !identity;
  ensure_workspace(b.size(), 2);
  ensure_bases(b.size(), m, flexible);
  Vector &r = work_[0], &z = work_[1];
  MultiVector& V = *basis_v_;
  const size64_t m1 = m + 1;
  double* gd = gs_scratch_.data();  // the products (up to (m + 2) x 2), in the executor's memory

  SolveStatus& st = c.st;
  if (!c.start(b, x, r, config_)) return st;
  double beta = st.residual;

  std::vector<double> H(static_cast<std::size_t>(m1 * m)), g(m1), y(m), G(2 * (m1 + 1)), coef(2 * std::size_t(m));
  auto h = [&](int i, int j) -> double& { return H[static_cast<std::size_t>(j * m1 + i)]; };
  Array<double> cd(exec_, 2 * size64_t(m));  // [s, c] for the two-column update, then y
  // The first k entries of src to the device (through coef: the whole array, one copy).
  auto upload = [&](const double* src, std::size_t k) {
    if (src != coef.data()) std::copy(src, src + k, coef.begin());
    cd.copy_from_host(std::span<const double>(coef));
  };
  // Givens QR of H(:, 0:k) from scratch (k <= m columns, at most m^2 / 2 rotations' work on the
  // host): R in Rq, the rotated right-hand side in g; returns |g[k]|, the residual estimate.
  std::vector<double> Rq(H.size()), cs(m), sn(m);
  auto rq = [&](int i, int j) -> double& { return Rq[static_cast<std::size_t>(j * m1 + i)]; };
  bool singular = false;
  auto qr = [&](int k) {
    singular = false;
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;
    for (int j = 0; j < k; ++j) {
      for (int i = 0; i <= j + 1; ++i) rq(i, j) = h(i, j);
      if (!givens_column(&rq(0, j), j, cs, sn, g)) singular = true, cs[j] = 1.0, sn[j] = 0.0;
    }
    return std::abs(g[k]);
  };
  auto finite = [](const double* a, std::size_t n) { return std::all_of(a, a + n, [](double e) { return std::isfinite(e); }); };

  while (beta > c.target && st.iterations < config_.max_iterations) {
    axpby(1.0 / beta, r, 0.0, V.col(0));
    c.vectors(2.0);
    int j = 0;        // the columns of H made so far
    bool breakdown = false;
    for (; j < m && st.iterations < config_.max_iterations; ++j) {
      grow_bases(j, flexible);
      Vector& w = V.col(j + 1);
      c.spmv(1.0, flexible ? c.precond(V.col(j), basis_z_->col(j)) : c.precond(V.col(j), z), 0.0, w);
      c.orth_begin();
      ++st.iterations;
      // G(:, 0) = V(:, 0:j+2)^T v_j, G(:, 1) = V(:, 0:j+2)^T w (leading dimension j + 2)
      const int k2 = j + 2;
      gemm_t(V, k2, j, 2, gd);
      exec_->copy_to_host(G.data(), gd, sizeof(double) * 2 * std::size_t(k2));
      c.sum(G.data(), 2 * k2);
      c.vectors(double(k2) + 2.0);
      if (!finite(G.data(), 2 * std::size_t(k2))) {
        c.orth_end();
        return c.fail(SolveReason::not_finite);
      }
      const double* gs = G.data();        // s = gs[0..j), alpha = gs[j]
      const double* gc = G.data() + k2;   // c = gc[0..j), d = gc[j], w.w = gc[j + 1]
      double rho = 1.0, hj = gc[j];
      if (j > 0) {
        double ss = 0.0, sc = 0.0;
        for (int i = 0; i < j; ++i) ss += gs[i] * gs[i], sc += gs[i] * gc[i];
        const double rho2 = gs[j] - ss;
        if (!(rho2 > 0.5 * gs[j])) {  // v_j nearly inside the basis: orthogonality lost
          c.orth_end();
          breakdown = true;
          break;
        }
        rho = std::sqrt(rho2);
        for (int i = 0; i < j; ++i) h(i, j - 1) += h(j, j - 1) * gs[i];
        h(j, j - 1) *= rho;
        for (int i = 0; i < j; ++i) coef[i] = gs[i], coef[j + i] = gc[i];
        upload(coef.data(), 2 * std::size_t(j));
        gemm_n(-1.0, V, j, cd.data(), 1.0, j, 2);  // [v_j, w] -= V_{j-1} [s, c]
        axpby(1.0 / rho, V.col(j), 0.0, V.col(j));
        c.vectors(double(j) + 4.0 + 2.0);
        hj = (gc[j] - sc) / rho;
      }
      axpby(-hj, V.col(j), 1.0, w);
      c.vectors(3.0);
      double cc = hj * hj;
      for (int i = 0; i < j; ++i) h(i, j) = gc[i], cc += gc[i] * gc[i];
      h(j, j) = hj;
      double beta2 = gc[j + 1] - cc;
      if (!(beta2 > 1e-8 * gc[j + 1])) {  // cancellation: the norm explicitly
        beta2 = c.dot(w, w);
        c.vectors(1.0);
      }
      const double hn = std::sqrt(std::max(beta2, 0.0));
      if (!std::isfinite(hn)) {
        c.orth_end();
        return c.fail(SolveReason::not_finite);
      }
      h(j + 1, j) = hn;
      if (hn == 0.0) {  // happy breakdown: w lies in the basis, column j is final
        qr(j + 1);
        c.orth_end();
        ++j;
        break;
      }
      axpby(1.0 / hn, w, 0.0, w);
      c.vectors(2.0);
      const bool last = j + 1 == m || st.iterations >= config_.max_iterations;
      if (qr(j + 1) <= c.target || last) {
        // Finish v_{j+1}'s second pass coefficients, correct column j, decide again.
        gemv_t(V, k2, w, gd, GemvKernel::cublas);
        exec_->copy_to_host(G.data(), gd, sizeof(double) * std::size_t(k2));
        c.sum(G.data(), k2);
        c.vectors(double(k2) + 1.0);
        double ss = 0.0;
        for (int i = 0; i <= j; ++i) ss += G[i] * G[i];
        const double rho2 = G[j + 1] - ss;
        if (finite(G.data(), std::size_t(k2)) && rho2 > 0.5 * G[j + 1]) {
          const double rh = std::sqrt(rho2);
          for (int i = 0; i <= j; ++i) h(i, j) += h(j + 1, j) * G[i];
          h(j + 1, j) *= rh;
          if (qr(j + 1) <= c.target || last) {
            c.orth_end();
            ++j;
            break;
          }
          // Not met after all: complete v_{j+1}'s second pass now (the next iteration's
          // correction of column j is then of rounding size).
          upload(G.data(), std::size_t(j) + 1);
          gemv_n(-1.0, V, j + 1, cd.data(), 1.0, w, GemvKernel::cublas);
          axpby(1.0 / rh, w, 0.0, w);
          c.vectors(double(j) + 1.0 + 2.0 + 2.0);
        } else {
          qr(j + 1);  // no usable correction: keep the provisional column
          c.orth_end();
          ++j;
          break;
        }
      }
      c.orth_end();
    }
    // x += Z y (FGMRES) or x += M^{-1} (V y) (GMRES), R y = g on the first j columns.
    if (singular && j > 0) return c.fail(SolveReason::breakdown);
    back_substitute(Rq, std::size_t(m1), g, j, y);
    if (j > 0) {
      upload(y.data(), static_cast<std::size_t>(j));
      gmres_update(c, j, cd.data(), flexible, GemvKernel::cublas, x);
    }
    if (gmres_cycle_end(c, b, x, breakdown, beta)) return st;
  }
  st.converged = beta <= c.target;
  st.reason = st.converged ? SolveReason::converged : SolveReason::max_iterations;
  return st;
}

// P: uniform [-1, 1) entries from the raw output of a fixed-seed mt19937_64 (which the standard
// pins down, unlike its distributions), so every backend and platform starts from the same
// vectors; orthonormalised on the executor by classical Gram–Schmidt applied twice.
// The shadow space P: s random vectors from one fixed-seed sequence over the whole system in global row order (each
// rank keeps its owned rows' entries, so any number of ranks has the same P), orthonormalised with global products.
void KrylovSolver::ensure_shadow_space(const Context& ctx, size64_t n, int s)
{
  if (static_cast<int>(shadow_.size()) == s && shadow_.front().size() == n) return;
  shadow_.clear();
  shadow_.reserve(static_cast<std::size_t>(s));  // the pointers below stay valid
  // Distributed: the rank's rows among all rows (block rows in global id order, bs entries each).
  std::span<const dist::gindex_t> rows;
  int bs = 1;
  size64_t total = n;
  if (ctx.D) {
    rows = ctx.D->map().owned_globals();
    bs = ctx.D->block_size();
    total = static_cast<size64_t>(ctx.comm ? ctx.comm->sum(static_cast<long long>(n)) : static_cast<long long>(n));
  }
  std::mt19937_64 gen(20111);
  std::vector<double> h(static_cast<std::size_t>(n)), all(ctx.D ? static_cast<std::size_t>(total) : 0),
      c(static_cast<std::size_t>(s));
  std::vector<const Vector*> done;
  for (int j = 0; j < s; ++j) {
    if (!ctx.D) {
      for (auto& e : h) e = static_cast<double>(gen() >> 11) * 0x1.0p-52 - 1.0;
    } else {
      for (auto& e : all) e = static_cast<double>(gen() >> 11) * 0x1.0p-52 - 1.0;
      for (std::size_t r = 0; r < rows.size(); ++r)
        std::copy_n(all.data() + std::size_t(rows[r]) * std::size_t(bs), bs, h.data() + r * std::size_t(bs));
    }
    Vector& p = shadow_.emplace_back(exec_, std::span<const double>(h));
    for (int pass = 0; pass < 2; ++pass) {
      ctx.dots(done.data(), j, p, c.data());
      for (int i = 0; i < j; ++i) c[i] = -c[i];
      multi_axpby(done.data(), c.data(), j, 1.0, p);
    }
    axpby(1.0 / ctx.norm2(p), p, 0.0, p);
    done.push_back(&p);
  }
}

// IDR(s) with biorthogonalisation (van Gijzen and Sonneveld, ACM TOMS Algorithm 913), right
// preconditioned as in that algorithm: the search directions u_k carry M^{-1}, g_k = A u_k,
// and r is the true residual's recurrence. One iteration is one preconditioned SpMV (s inner
// steps plus one omega step per cycle). Breakdowns, reported after a final true residual:
//   M(k,k) = p_k . g_k = 0  the new direction is invisible to the shadow space, so beta (and
//                           the next s x s solves) are undefined;
//   t = A M^{-1} r with t.t = 0 or t.r = 0  omega = 0 would leave r unchanged and collapse
//                           the next space (t = 0 with r != 0 means A M^{-1} is singular).
// When the recurrence meets the target but the explicit residual does not, the method restarts
// from the explicit residual with fresh G, U and M.
SolveStatus KrylovSolver::idr(Context& ctx, const Vector& b, Vector& x)
{
  // A shadow space of more than n dimensions cannot be orthonormal: IDR(n) is as far as it goes.
  // (The whole system's size: every rank takes the same s.)
  const auto rows = ctx.comm ? static_cast<size64_t>(ctx.comm->sum(static_cast<long long>(b.size()))) : b.size();
  const int s = static_cast<int>(std::clamp<size64_t>(rows, 1, config_.idr_s));
  ensure_workspace(b.size(), 2 * s + 3);
  auto G = [&](int i) -> Vector& { return work_[i]; };
  auto U = [&](int i) -> Vector& { return work_[s + i]; };
  Vector &r = work_[2 * s], &v = work_[2 * s + 1], &vhat = work_[2 * s + 2];

  SolveStatus& st = ctx.st;
  if (!ctx.start(b, x, r, config_)) return st;
  double rnorm = st.residual;
  const double target = ctx.target;
  ensure_shadow_space(ctx, b.size(), s);
  auto conclude = [&](SolveReason otherwise) { return ctx.conclude(b, x, r, otherwise); };
  auto finite = [](std::span<const double> v) { return std::all_of(v.begin(), v.end(), [](double e) { return std::isfinite(e); }); };
  constexpr double kappa = 0.7;  // Algorithm 913's threshold on |cos(t, r)| for omega (below)

  // The s x s system (M(i,j) = p_i . g_j, lower triangular), f = P^T r and the coefficients stay
  // on the host; Pr = (p_0, ..., p_{s-1}, r) lets one fused pass return P^T r and r.r together.
  const auto ss = static_cast<std::size_t>(s);
  std::vector<double> Mh(ss * ss), f(ss), c(ss), d(ss + 1), coef(ss + 1);
  auto m = [&](int i, int j) -> double& { return Mh[static_cast<std::size_t>(i) * ss + j]; };
  std::vector<const Vector*> Pr(ss + 1), vecs(ss + 1);
  for (int i = 0; i < s; ++i) Pr[i] = &shadow_[i];
  Pr[s] = &r;
  const int max_it = config_.max_iterations;

  for (;;) {
    // (Re)start: G = U = 0, M = I, omega = 1.
    for (int i = 0; i < s; ++i) fill(G(i), 0.0), fill(U(i), 0.0);
    std::fill(Mh.begin(), Mh.end(), 0.0);
    for (int i = 0; i < s; ++i) m(i, i) = 1.0;
    double omega = 1.0;
    ctx.dots(Pr.data(), s, r, f.data());
    if (!finite(f)) return ctx.fail(SolveReason::not_finite);
    bool small = false;  // the recurrence residual met the target
    while (!small && st.iterations < max_it) {
      for (int k = 0; k < s && st.iterations < max_it; ++k) {
        // c = M(k:s, k:s)^{-1} f(k:s) by forward substitution (the diagonal was checked nonzero).
        for (int i = k; i < s; ++i) {
          double t = f[i];
          for (int j = k; j < i; ++j) t -= m(i, j) * c[j];
          c[i] = t / m(i, i);
        }
        // v = r - sum_{i>=k} c_i g_i;  u_k = omega M^{-1} v + sum_{i>=k} c_i u_i (u_k's own term as b).
        vecs[0] = &r, coef[0] = 1.0;
        for (int i = k; i < s; ++i) vecs[i - k + 1] = &G(i), coef[i - k + 1] = -c[i];
        multi_axpby(vecs.data(), coef.data(), s - k + 1, 0.0, v);
        vecs[0] = &ctx.precond(v, vhat), coef[0] = omega;
        for (int i = k + 1; i < s; ++i) vecs[i - k] = &U(i), coef[i - k] = c[i];
        multi_axpby(vecs.data(), coef.data(), s - k, c[k], U(k));
        ctx.spmv(1.0, U(k), 0.0, G(k));
        ++st.iterations;
        ctx.orth_begin();
        // Make g_k orthogonal to p_0..p_{k-1}. The algorithm's sequential (modified Gram–Schmidt)
        // loop is replayed on the host from one fused pass d = P^T g_k, using p_j . g_i = M(j,i)
        // for the g_i already in place; g_k and u_k then take one combined update each.
        ctx.dots(Pr.data(), s, G(k), d.data());
        if (!finite(std::span(d).first(ss))) return ctx.orth_end(), ctx.fail(SolveReason::not_finite);
        for (int i = 0; i < k; ++i) {
          coef[i] = -d[i] / m(i, i);  // -alpha_i
          for (int j = i + 1; j < s; ++j) d[j] += coef[i] * m(j, i);
        }
        if (k > 0) {
          for (int i = 0; i < k; ++i) vecs[i] = &G(i);
          multi_axpby(vecs.data(), coef.data(), k, 1.0, G(k));
          for (int i = 0; i < k; ++i) vecs[i] = &U(i);
          multi_axpby(vecs.data(), coef.data(), k, 1.0, U(k));
        }
        ctx.orth_end();
        for (int i = k; i < s; ++i) m(i, k) = d[i];
        if (m(k, k) == 0.0) return conclude(SolveReason::breakdown);
        const double beta = f[k] / m(k, k);
        axpby(-beta, G(k), 1.0, r);
        axpby(beta, U(k), 1.0, x);
        rnorm = ctx.norm2(r);
        if (!std::isfinite(beta) || !std::isfinite(rnorm)) return ctx.fail(SolveReason::not_finite);
        if (rnorm <= target) {
          small = true;
          break;
        }
        for (int i = k + 1; i < s; ++i) f[i] -= beta * m(i, k);  // f = P^T r (f_0..f_k are now 0)
      }
      if (small || st.iterations >= max_it) break;

      // Into the next space: t = A M^{-1} r and omega minimises ||r - omega t||, except that when
      // |cos(t, r)| < kappa it is enlarged by kappa / |cos(t, r)| (Sleijpen and van der Vorst's
      // "maintaining the convergence": a small minimising omega slows the following cycles and
      // amplifies rounding errors).
      const Vector& rhat = ctx.precond(r, vhat);
      ctx.spmv(1.0, rhat, 0.0, v);
      ++st.iterations;
      const Vector* tr[2] = {&v, &r};
      ctx.dots(tr, 2, v, d.data());
      const double tt = d[0], rt = d[1];
      if (!std::isfinite(tt) || !std::isfinite(rt)) return ctx.fail(SolveReason::not_finite);
      if (tt == 0.0 || rt == 0.0) return conclude(SolveReason::breakdown);
      omega = rt / tt;
      const double rho = std::abs(rt) / (std::sqrt(tt) * rnorm);
      if (rho < kappa) omega *= kappa / rho;
      axpby(omega, rhat, 1.0, x);
      axpby(-omega, v, 1.0, r);
      ctx.dots(Pr.data(), s + 1, r, d.data());
      if (!finite(d)) return ctx.fail(SolveReason::not_finite);
      std::copy_n(d.begin(), s, f.begin());
      rnorm = std::sqrt(d[s]);
      small = rnorm <= target;
    }
    conclude(SolveReason::max_iterations);
    if (st.converged || !std::isfinite(st.residual) || st.iterations >= max_it) return st;
    rnorm = st.residual;  // the recurrence claimed a residual the explicit one does not confirm: restart
  }
}



// Bytes per unpreconditioned iteration, from the operation counts stated above each method
// (8 n bytes per vector pass; an SpMV reads A and x and writes y).
double bytes_per_iteration(const KrylovConfig& config, size64_t n, double matrix_bytes, bool on_cuda)
{
  const double vec = 8.0 * static_cast<double>(n);
  const double spmv = matrix_bytes + 2.0 * vec;
  switch (config.method) {
    case KrylovMethod::cg: return spmv + 11.0 * vec;
    case KrylovMethod::bicgstab: return 2.0 * spmv + 18.0 * vec;
    case KrylovMethod::gmres:
    case KrylovMethod::fgmres: {
      const double m = std::max(1, config.restart);
      // dcgs2, iteration j: the product (j + 4), for j > 0 the two-column update and v_j's scaling
      // (j + 6), w's update (3) and scaling (2): 9 at j = 0, 2 j + 15 after; once a cycle the end's
      // product (m + 2). Per iteration over a full cycle: (m^2 + 15 m - 4) / m.
      if (config.orthogonalization == Orthogonalization::dcgs2) return spmv + (m + 15.0 - 4.0 / m) * vec;
      // cgs2, iteration j (k = j + 1): SpMV + CGS2 2 (2k + 3) + norm 1 + scaling 2; mean k = (m + 1) / 2.
      // Fused (GemvKernel::fused with every k <= m within the kernels' limit, as the CUDA backend runs
      // it): 3k + 5 + 2.
      if (on_cuda && config.gemv == GemvKernel::fused && m <= cgs2_fused_max_cols) return spmv + (1.5 * (m + 1.0) + 7.0) * vec;
      return spmv + (2.0 * (m + 1.0) + 9.0) * vec;
    }
    case KrylovMethod::idr: {
      // Inner step k of s: v (s - k + 2), u_k (s - k + 2), SpMV, P^T g_k (s + 1), orthogonalising
      // g_k and u_k against k earlier ones (2 (k + 2) when k > 0), r and x updates (6), ||r|| (1).
      // The omega step: SpMV, (t.t, t.r) (2), x and r updates (6), (P, r)^T r (s + 1).
      const int s = std::clamp(config.idr_s, 1, max_idr_s);
      double cycle = (s + 1) * spmv;
      for (int k = 0; k < s; ++k) cycle += (2.0 * (s - k + 2) + (s + 1) + (k > 0 ? 2.0 * (k + 2) : 0.0) + 7.0) * vec;
      cycle += (2.0 + 6.0 + (s + 1)) * vec;
      return cycle / (s + 1);
    }
  }
  return 0.0;
}

}  // namespace blockres
