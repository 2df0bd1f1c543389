// BiCGSTAB and GMRES(m): backend-neutral algorithms over spmv, the vector ops and a preconditioner.
#include "linalg/krylov.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace blockres {

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

void KrylovSolver::ensure_workspace(size64_t n, int nvec)
{
  if (static_cast<int>(work_.size()) >= nvec && !work_.empty() && work_.front().size() == n) return;
  work_.clear();
  for (int i = 0; i < nvec; ++i) work_.emplace_back(exec_, n);
}

double KrylovSolver::true_residual(const BsrMatrix& A, const Vector& b, const Vector& x, Vector& r)
{
  copy(b, r);
  spmv(A, -1.0, x, 1.0, r);
  return norm2(r);
}

SolveStatus KrylovSolver::solve(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x)
{
  if (b.size() != A.scalar_rows() || x.size() != b.size())
    throw std::invalid_argument("KrylovSolver::solve: vector sizes do not match the matrix");
  return config_.method == KrylovMethod::gmres ? gmres(A, M, b, x) : bicgstab(A, M, b, x);
}

SolveStatus KrylovSolver::bicgstab(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x)
{
  ensure_workspace(b.size(), 7);
  Vector &r = work_[0], &rhat = work_[1], &p = work_[2], &v = work_[3], &phat = work_[4], &shat = work_[5],
         &t = work_[6];
  SolveStatus st;
  double rnorm = true_residual(A, b, x, r);
  st.initial_residual = st.residual = rnorm;
  if (!std::isfinite(rnorm)) return st.reason = SolveReason::not_finite, st;
  const double target = std::max(config_.rel_tol * rnorm, config_.abs_tol);
  if (rnorm <= target) return st.converged = true, st.reason = SolveReason::converged, st;

  // Outer loop: restart with a fresh shadow residual r^ = r (true residual) whenever the
  // recurrence breaks down (r^.r = 0 or r^.v = 0 after progress, e.g. when r^ was supported
  // on a few equations that decouple from the rest) or claims convergence the explicit
  // residual does not confirm. A breakdown in the first iteration after a restart is final.
  while (st.iterations < config_.max_iterations) {
    copy(r, rhat);
    double rho_old = 1.0, alpha = 1.0, omega = 1.0;
    bool final_breakdown = false;
    for (int k = 0; st.iterations < config_.max_iterations; ++k) {
      const double rho = dot(rhat, r);
      if (!std::isfinite(rho)) return st.reason = SolveReason::not_finite, st;
      if (rho == 0.0) {
        final_breakdown = k == 0;
        break;
      }
      if (k == 0)
        copy(r, p);
      else
        axpbypcz(1.0, r, -(rho / rho_old) * alpha, v, (rho / rho_old) * (alpha / omega), p);  // p = r + beta (p - omega v)
      M.apply(p, phat);
      spmv(A, 1.0, phat, 0.0, v);
      const double rv = dot(rhat, v);
      if (!std::isfinite(rv)) return st.reason = SolveReason::not_finite, st;
      if (rv == 0.0) {
        final_breakdown = k == 0;
        break;
      }
      alpha = rho / rv;
      axpby(-alpha, v, 1.0, r);  // r <- s = r - alpha v
      ++st.iterations;
      const double snorm = norm2(r);
      if (!std::isfinite(snorm)) return st.reason = SolveReason::not_finite, st;
      if (snorm <= target) {
        axpby(alpha, phat, 1.0, x);
        break;
      }
      M.apply(r, shat);
      spmv(A, 1.0, shat, 0.0, t);
      const double tt = dot(t, t);
      if (!std::isfinite(tt)) return st.reason = SolveReason::not_finite, st;
      omega = tt > 0.0 ? dot(t, r) / tt : 0.0;
      axpbypcz(alpha, phat, omega, shat, 1.0, x);  // x += alpha phat + omega shat
      if (omega == 0.0) break;                     // r = s; the next r^.r would vanish: restart
      axpby(-omega, t, 1.0, r);                    // r = s - omega t
      rnorm = norm2(r);
      if (!std::isfinite(rnorm)) return st.reason = SolveReason::not_finite, st;
      if (rnorm <= target) break;
      rho_old = rho;
    }
    st.residual = true_residual(A, b, x, r);
    if (!std::isfinite(st.residual)) return st.reason = SolveReason::not_finite, st;
    if (st.residual <= target) return st.converged = true, st.reason = SolveReason::converged, st;
    if (final_breakdown) return st.reason = SolveReason::breakdown, st;
  }
  st.reason = SolveReason::max_iterations;
  return st;
}

SolveStatus KrylovSolver::gmres(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x)
{
  const int m = std::max(1, config_.restart);
  ensure_workspace(b.size(), m + 3);
  Vector& r = work_[m + 1];
  Vector& z = work_[m + 2];
  auto V = [&](int j) -> Vector& { return work_[j]; };

  SolveStatus st;
  double beta = true_residual(A, b, x, r);
  st.initial_residual = st.residual = beta;
  if (!std::isfinite(beta)) return st.reason = SolveReason::not_finite, st;
  const double target = std::max(config_.rel_tol * beta, config_.abs_tol);

  std::vector<double> H(static_cast<std::size_t>((m + 1) * m)), cs(m), sn(m), g(m + 1), y(m);
  auto h = [&](int i, int j) -> double& { return H[static_cast<std::size_t>(j * (m + 1) + i)]; };

  while (beta > target && st.iterations < config_.max_iterations) {
    axpby(1.0 / beta, r, 0.0, V(0));
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;
    int j = 0;
    bool breakdown = false;
    for (; j < m && st.iterations < config_.max_iterations; ++j) {
      M.apply(V(j), z);
      spmv(A, 1.0, z, 0.0, V(j + 1));
      Vector& w = V(j + 1);
      // Classical Gram–Schmidt, applied twice (CGS2) for orthogonality in finite precision.
      for (int i = 0; i <= j; ++i) h(i, j) = 0.0;
      for (int pass = 0; pass < 2; ++pass) {
        std::vector<double> c(static_cast<std::size_t>(j + 1));
        for (int i = 0; i <= j; ++i) c[i] = dot(V(i), w);
        for (int i = 0; i <= j; ++i) {
          axpby(-c[i], V(i), 1.0, w);
          h(i, j) += c[i];
        }
      }
      const double hn = norm2(w);
      if (!std::isfinite(hn)) return st.reason = SolveReason::not_finite, st;
      h(j + 1, j) = hn;
      ++st.iterations;
      // Apply previous Givens rotations to the new column, then make a new one.
      for (int i = 0; i < j; ++i) {
        const double t = cs[i] * h(i, j) + sn[i] * h(i + 1, j);
        h(i + 1, j) = -sn[i] * h(i, j) + cs[i] * h(i + 1, j);
        h(i, j) = t;
      }
      const double d = std::hypot(h(j, j), h(j + 1, j));
      if (d == 0.0) {
        breakdown = true;
        break;
      }
      cs[j] = h(j, j) / d;
      sn[j] = h(j + 1, j) / d;
      h(j, j) = d;
      h(j + 1, j) = 0.0;
      g[j + 1] = -sn[j] * g[j];
      g[j] = cs[j] * g[j];
      if (hn == 0.0 || std::abs(g[j + 1]) <= target) {
        ++j;
        break;
      }
      axpby(1.0 / hn, w, 0.0, w);
    }
    // x += M^{-1} (V y) with H y = g (upper triangular after the rotations).
    for (int i = j - 1; i >= 0; --i) {
      double s = g[i];
      for (int k = i + 1; k < j; ++k) s -= h(i, k) * y[k];
      y[i] = s / h(i, i);
    }
    if (j > 0) {
      axpby(y[0], V(0), 0.0, r);
      for (int i = 1; i < j; ++i) axpby(y[i], V(i), 1.0, r);
      M.apply(r, z);
      axpby(1.0, z, 1.0, x);
    }
    beta = true_residual(A, b, x, r);
    st.residual = beta;
    if (!std::isfinite(beta)) return st.reason = SolveReason::not_finite, st;
    if (breakdown && beta > target) return st.reason = SolveReason::breakdown, st;
  }
  st.converged = beta <= target;
  st.reason = st.converged ? SolveReason::converged : SolveReason::max_iterations;
  return st;
}

}  // namespace blockres
