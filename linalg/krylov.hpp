// Krylov solvers (BiCGSTAB, restarted GMRES with CGS2), right-preconditioned, on either backend.
#pragma once

#include "linalg/bsr_matrix.hpp"
#include "linalg/preconditioner.hpp"
#include "linalg/vector_ops.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace blockres {

enum class KrylovMethod { bicgstab, gmres };

struct KrylovConfig {
  KrylovMethod method = KrylovMethod::bicgstab;
  double rel_tol = 1e-6;      // stop when ||b - A x|| <= max(rel_tol * ||b - A x0||, abs_tol)
  double abs_tol = 0.0;
  int max_iterations = 500;
  int restart = 30;           // GMRES(m)
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

 private:
  SolveStatus bicgstab(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x);
  SolveStatus gmres(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x);
  void ensure_workspace(size64_t n, int nvec);
  double true_residual(const BsrMatrix& A, const Vector& b, const Vector& x, Vector& r);

  ExecPtr exec_;
  KrylovConfig config_;
  std::vector<Vector> work_;
};

}  // namespace blockres
