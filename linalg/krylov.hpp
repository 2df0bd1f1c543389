// Krylov solvers (BiCGSTAB, restarted GMRES with CGS2, IDR(s)), right-preconditioned, on either backend.
#pragma once

#include "linalg/bsr_matrix.hpp"
#include "linalg/preconditioner.hpp"
#include "linalg/vector_ops.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace blockres {

enum class KrylovMethod { bicgstab, gmres, idr };
std::string_view to_string(KrylovMethod m);

constexpr int max_idr_s = 16;

// What one iteration is, for `max_iterations` and SolveStatus::iterations:
//   bicgstab  one full BiCGSTAB step (two preconditioned SpMVs);
//   gmres     one Arnoldi step (one preconditioned SpMV);
//   idr       one preconditioned SpMV: an IDR(s) cycle of s inner steps plus the step that
//             computes omega is s + 1 iterations, so the counts compare with GMRES.
struct KrylovConfig {
  KrylovMethod method = KrylovMethod::bicgstab;
  double rel_tol = 1e-6;      // stop when ||b - A x|| <= max(rel_tol * ||b - A x0||, abs_tol)
  double abs_tol = 0.0;
  int max_iterations = 500;
  int restart = 30;           // GMRES(m)
  int idr_s = 4;              // IDR(s): dimension of the shadow space, 1..max_idr_s
};

enum class SolveReason { converged, max_iterations, breakdown, not_finite };
std::string_view to_string(SolveReason r);

struct SolveStatus {
  bool converged = false;
  int iterations = 0;
  double initial_residual = 0.0;  // ||b - A x0||
  double residual = 0.0;          // true residual ||b - A x|| at exit
  SolveReason reason = SolveReason::max_iterations;
};

class KrylovSolver {
 public:
  KrylovSolver(ExecPtr exec, KrylovConfig config) : exec_(std::move(exec)), config_(config) {}
  // Solves A x = b; x holds the initial guess on entry. Right preconditioning, so the
  // monitored residual is the true (unpreconditioned) one; convergence is confirmed with an
  // explicitly computed residual, never only the recurrence.
  SolveStatus solve(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x);
  const KrylovConfig& config() const { return config_; }
  // New settings for later solves; the workspace (and IDR's shadow space while n and s stay)
  // is kept.
  void set_config(const KrylovConfig& config) { config_ = config; }

 private:
  SolveStatus bicgstab(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x);
  SolveStatus gmres(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x);
  SolveStatus idr(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x);
  void ensure_workspace(size64_t n, int nvec);
  void ensure_shadow_space(size64_t n, int s);
  double true_residual(const BsrMatrix& A, const Vector& b, const Vector& x, Vector& r);

  ExecPtr exec_;
  KrylovConfig config_;
  std::vector<Vector> work_;
  std::vector<Vector> shadow_;  // IDR(s): the s orthonormal columns of P, kept while n and s stay
};

}  // namespace blockres
