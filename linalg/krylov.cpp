// BiCGSTAB, GMRES(m) and IDR(s): backend-neutral algorithms over spmv, the vector ops and a preconditioner.
#include "linalg/krylov.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <stdexcept>

namespace blockres {

std::string_view to_string(KrylovMethod m)
{
  switch (m) {
    case KrylovMethod::bicgstab: return "bicgstab";
    case KrylovMethod::gmres: return "gmres";
    case KrylovMethod::idr: return "idr";
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
  switch (config_.method) {
    case KrylovMethod::gmres: return gmres(A, M, b, x);
    case KrylovMethod::idr:
      if (config_.idr_s < 1 || config_.idr_s > max_idr_s)
        throw std::invalid_argument("KrylovSolver::solve: IDR(s) needs 1 <= s <= " + std::to_string(max_idr_s) +
                                    ", got s = " + std::to_string(config_.idr_s));
      return idr(A, M, b, x);
    case KrylovMethod::bicgstab: break;
  }
  return bicgstab(A, M, b, x);
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

// P: uniform [-1, 1) entries from the raw output of a fixed-seed mt19937_64 (which the standard
// pins down, unlike its distributions), so every backend and platform starts from the same
// vectors; orthonormalised on the executor by classical Gram–Schmidt applied twice.
void KrylovSolver::ensure_shadow_space(size64_t n, int s)
{
  if (static_cast<int>(shadow_.size()) == s && shadow_.front().size() == n) return;
  shadow_.clear();
  shadow_.reserve(static_cast<std::size_t>(s));  // the pointers below stay valid
  std::mt19937_64 gen(20111);
  std::vector<double> h(static_cast<std::size_t>(n)), c(static_cast<std::size_t>(s));
  std::vector<const Vector*> done;
  for (int j = 0; j < s; ++j) {
    for (auto& e : h) e = static_cast<double>(gen() >> 11) * 0x1.0p-52 - 1.0;
    Vector& p = shadow_.emplace_back(exec_, std::span<const double>(h));
    for (int pass = 0; pass < 2; ++pass) {
      dots(done.data(), j, p, c.data());
      for (int i = 0; i < j; ++i) c[i] = -c[i];
      multi_axpby(done.data(), c.data(), j, 1.0, p);
    }
    axpby(1.0 / norm2(p), p, 0.0, p);
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
SolveStatus KrylovSolver::idr(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x)
{
  // A shadow space of more than n dimensions cannot be orthonormal: IDR(n) is as far as it goes.
  const int s = static_cast<int>(std::clamp<size64_t>(b.size(), 1, config_.idr_s));
  ensure_workspace(b.size(), 2 * s + 3);
  auto G = [&](int i) -> Vector& { return work_[i]; };
  auto U = [&](int i) -> Vector& { return work_[s + i]; };
  Vector &r = work_[2 * s], &v = work_[2 * s + 1], &vhat = work_[2 * s + 2];

  SolveStatus st;
  double rnorm = true_residual(A, b, x, r);
  st.initial_residual = st.residual = rnorm;
  if (!std::isfinite(rnorm)) return st.reason = SolveReason::not_finite, st;
  const double target = std::max(config_.rel_tol * rnorm, config_.abs_tol);
  if (rnorm <= target) return st.converged = true, st.reason = SolveReason::converged, st;
  ensure_shadow_space(b.size(), s);

  // Ends the solve on the explicit residual: converged when it meets the target, else `otherwise`.
  auto conclude = [&](SolveReason otherwise) {
    st.residual = true_residual(A, b, x, r);
    st.converged = st.residual <= target;
    st.reason = !std::isfinite(st.residual) ? SolveReason::not_finite
                : st.converged              ? SolveReason::converged
                                            : otherwise;
    return st;
  };
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
    dots(Pr.data(), s, r, f.data());
    if (!finite(f)) return st.reason = SolveReason::not_finite, st;
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
        M.apply(v, vhat);
        vecs[0] = &vhat, coef[0] = omega;
        for (int i = k + 1; i < s; ++i) vecs[i - k] = &U(i), coef[i - k] = c[i];
        multi_axpby(vecs.data(), coef.data(), s - k, c[k], U(k));
        spmv(A, 1.0, U(k), 0.0, G(k));
        ++st.iterations;
        // Make g_k orthogonal to p_0..p_{k-1}. The algorithm's sequential (modified Gram–Schmidt)
        // loop is replayed on the host from one fused pass d = P^T g_k, using p_j . g_i = M(j,i)
        // for the g_i already in place; g_k and u_k then take one combined update each.
        dots(Pr.data(), s, G(k), d.data());
        if (!finite(std::span(d).first(ss))) return st.reason = SolveReason::not_finite, st;
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
        for (int i = k; i < s; ++i) m(i, k) = d[i];
        if (m(k, k) == 0.0) return conclude(SolveReason::breakdown);
        const double beta = f[k] / m(k, k);
        axpby(-beta, G(k), 1.0, r);
        axpby(beta, U(k), 1.0, x);
        rnorm = norm2(r);
        if (!std::isfinite(beta) || !std::isfinite(rnorm)) return st.reason = SolveReason::not_finite, st;
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
      M.apply(r, vhat);
      spmv(A, 1.0, vhat, 0.0, v);
      ++st.iterations;
      const Vector* tr[2] = {&v, &r};
      dots(tr, 2, v, d.data());
      const double tt = d[0], rt = d[1];
      if (!std::isfinite(tt) || !std::isfinite(rt)) return st.reason = SolveReason::not_finite, st;
      if (tt == 0.0 || rt == 0.0) return conclude(SolveReason::breakdown);
      omega = rt / tt;
      const double rho = std::abs(rt) / (std::sqrt(tt) * rnorm);
      if (rho < kappa) omega *= kappa / rho;
      axpby(omega, vhat, 1.0, x);
      axpby(-omega, v, 1.0, r);
      dots(Pr.data(), s + 1, r, d.data());
      if (!finite(d)) return st.reason = SolveReason::not_finite, st;
      std::copy_n(d.begin(), s, f.begin());
      rnorm = std::sqrt(d[s]);
      small = rnorm <= target;
    }
    conclude(SolveReason::max_iterations);
    if (st.converged || !std::isfinite(st.residual) || st.iterations >= max_it) return st;
    rnorm = st.residual;  // the recurrence claimed a residual the explicit one does not confirm: restart
  }
}

}  // namespace blockres
