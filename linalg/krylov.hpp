// Krylov solvers (CG, BiCGSTAB, restarted GMRES and flexible GMRES with CGS2, IDR(s)),
// right-preconditioned, on either backend.
#pragma once

#include "input/names.hpp"
#include "linalg/bsr_matrix.hpp"
#include "linalg/preconditioners/preconditioner.hpp"
#include "linalg/vector_ops.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace blockres {

enum class KrylovMethod { bicgstab, gmres, idr, cg, fgmres };
inline constexpr auto krylov_method_names = name_table<KrylovMethod>({{KrylovMethod::bicgstab, "bicgstab"},
                                                                      {KrylovMethod::gmres, "gmres"},
                                                                      {KrylovMethod::fgmres, "fgmres"},
                                                                      {KrylovMethod::idr, "idr"},
                                                                      {KrylovMethod::cg, "cg"}});
constexpr std::string_view to_string(KrylovMethod m) { return krylov_method_names.name(m); }

constexpr int max_idr_s = 16;

// GMRES/FGMRES orthogonalisation of each new Krylov vector w against the basis V (j + 1 columns):
//   cgs2   classical Gram–Schmidt twice, h1 = V^T w; w -= V h1; h2 = V^T w; w -= V h2; ||w||: four
//          passes over V and one host synchronisation per iteration;
//   dcgs2  CGS2 with the second pass delayed by one iteration and fused with the next vector's first
//          (Bielich, Langou, Thomas, Swirydowicz, Yamazaki, Boman, "Low-synch Gram-Schmidt with
//          delayed reorthogonalization for Krylov solvers", Parallel Computing 2022): one product
//          [V, w]^T [v_j, w] reorthogonalises v_j and projects w, one two-column update applies both,
//          norms by Pythagoras: two passes over V and one synchronisation per iteration (one more
//          to finish a cycle). The Hessenberg column of v_j is corrected when v_j is.
enum class Orthogonalization { cgs2, dcgs2 };
inline constexpr auto orthogonalization_names =
    name_table<Orthogonalization>({{Orthogonalization::cgs2, "cgs2"}, {Orthogonalization::dcgs2, "dcgs2"}});
constexpr std::string_view to_string(Orthogonalization o) { return orthogonalization_names.name(o); }

// Deck names of GemvKernel (linalg/vector_ops.hpp), the device's CGS2 step: "fused" (three passes,
// the default), "cublas" (five products with cuBLAS GEMVs), "own" (five with the own GEMVs).
inline constexpr auto gram_schmidt_names = name_table<GemvKernel>(
    {{GemvKernel::fused, "fused"}, {GemvKernel::cublas, "cublas"}, {GemvKernel::own, "own"}});
constexpr std::string_view to_string(GemvKernel g) { return gram_schmidt_names.name(g); }

// What the relative tolerance is relative to.
enum class ToleranceReference { initial_residual, rhs };
inline constexpr auto tolerance_reference_names = name_table<ToleranceReference>(
    {{ToleranceReference::initial_residual, "initial_residual"}, {ToleranceReference::rhs, "rhs"}});
constexpr std::string_view to_string(ToleranceReference r) { return tolerance_reference_names.name(r); }

// What one iteration is, for `max_iterations` and SolveStatus::iterations:
//   cg        one CG step (one preconditioned SpMV); needs A and M symmetric positive definite;
//   bicgstab  one full BiCGSTAB step (two preconditioned SpMVs);
//   gmres     one Arnoldi step (one preconditioned SpMV);
//   fgmres    one flexible Arnoldi step (one preconditioner application + SpMV; the
//             preconditioned vectors are kept, so M may change from one iteration to the next);
//   idr       one preconditioned SpMV: an IDR(s) cycle of s inner steps plus the step that
//             computes omega is s + 1 iterations, so the counts compare with GMRES.
struct KrylovConfig {
  KrylovMethod method = KrylovMethod::bicgstab;
  double rel_tol = 1e-6;      // stop when ||b - A x|| <= max(rel_tol * ||ref||, abs_tol)
  double abs_tol = 0.0;
  int max_iterations = 500;
  int restart = 30;           // GMRES(m), FGMRES(m)
  int idr_s = 4;              // IDR(s): dimension of the shadow space, 1..max_idr_s
  // ref = b - A x0 (initial_residual) or b (rhs). With x0 = 0 the two are the same.
  ToleranceReference reference = ToleranceReference::initial_residual;
  // GMRES/FGMRES Gram–Schmidt on the device (cgs2): three fused passes (vector_ops' cgs2), or five
  // products with cuBLAS GEMVs or the own tall-skinny kernels.
  GemvKernel gemv = GemvKernel::fused;
  Orthogonalization orthogonalization = Orthogonalization::cgs2;  // GMRES, FGMRES
};

// Where the time of the solves went, accumulated over solve() calls while profiling is on
// (KrylovSolver::set_profiling). On the CUDA backend the phases are timed with CUDA events on
// the executor's stream (no extra host synchronisation); on the CPU with a steady clock.
//   spmv               the products A x (including the explicit residuals b - A x);
//   precond            the preconditioner applications M^{-1} r;
//   orthogonalization  Gram–Schmidt (GMRES, FGMRES: the GEMVs, norms and Hessenberg work) and
//                      IDR(s)'s biorthogonalisation against the shadow space;
//   total              everything inside solve(); total minus the three above is the vector
//                      updates, dot products and host logic.
struct KrylovProfile {
  int solves = 0;
  long long iterations = 0;
  long long spmv_count = 0, precond_count = 0;
  // The bytes the solves moved at least, counted as they ran (kept whether or not phase timing is
  // on): every product with A (BsrMatrix::spmv_bytes), every preconditioner application as the
  // preconditioner states it (Preconditioner::apply_bytes) and the Krylov vector passes (the counts
  // of bytes_per_iteration, GMRES/FGMRES with each iteration's actual basis size).
  // precond_unstated: applications whose preconditioner states no bytes (bytes then undercounts).
  double bytes = 0.0;
  long long precond_unstated = 0;
  double total_seconds = 0, spmv_seconds = 0, precond_seconds = 0, orthogonalization_seconds = 0;
  double other_seconds() const { return total_seconds - spmv_seconds - precond_seconds - orthogonalization_seconds; }
};

// Bytes an iteration of `method` must move without preconditioning, as implemented here
// (fused kernels counted once), for the SpMV with A (matrix bytes `matrix_bytes`: values,
// column indices, row pointers) on vectors of n doubles. GMRES/FGMRES: the average over a
// full restart cycle of m iterations (classical Gram–Schmidt applied twice); IDR(s): the
// average over a cycle of s + 1 iterations. Restart and convergence-check work (explicit
// residuals, the solution update) is not counted: it is part of the measured time only.
// The formulas are spelled out next to each algorithm in krylov.cpp. `on_cuda`: as the CUDA backend
// runs it (GMRES's fused Gram–Schmidt, GemvKernel::fused, moves fewer vectors there).
double bytes_per_iteration(const KrylovConfig& config, size64_t n, double matrix_bytes, bool on_cuda = false);

enum class SolveReason { converged, max_iterations, breakdown, not_finite };
std::string_view to_string(SolveReason r);
// The same as a report key (JSON): converged, max_iterations, breakdown, not_finite.
const char* to_key(SolveReason r);

struct SolveStatus {
  bool converged = false;
  int iterations = 0;
  double initial_residual = 0.0;  // ||b - A x0||
  double residual = 0.0;          // true residual ||b - A x|| at exit
  SolveReason reason = SolveReason::max_iterations;
};

class PhaseTimer;
namespace dist {
class DistBsrMatrix;
}

class KrylovSolver {
 public:
  KrylovSolver(ExecPtr exec, KrylovConfig config);
  ~KrylovSolver();
  KrylovSolver(KrylovSolver&&) noexcept;
  KrylovSolver& operator=(KrylovSolver&&) noexcept;
  // Solves A x = b; x holds the initial guess on entry. Right preconditioning, so the
  // monitored residual is the true (unpreconditioned) one; convergence is confirmed with an
  // explicitly computed residual, never only the recurrence.
  SolveStatus solve(const BsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x);
  // The same on a row-distributed matrix (collective: every rank of A's communicator calls it): b and x hold this
  // rank's rows, M works on them alone (e.g. set up on A.diag(): additive Schwarz without overlap), and every dot
  // product and norm is summed over the ranks, so all ranks take the same steps. One rank: the serial solve, bit for
  // bit. IDR(s) is not distributed yet (std::invalid_argument on several ranks).
  SolveStatus solve(const dist::DistBsrMatrix& A, const Preconditioner& M, const Vector& b, Vector& x);
  const KrylovConfig& config() const { return config_; }
  // New settings for later solves; the workspace (and IDR's shadow space while n and s stay)
  // is kept.
  void set_config(const KrylovConfig& config) { config_ = config; }

  // Phase timing (KrylovProfile); off by default. Turning it on or off keeps the totals.
  void set_profiling(bool on);
  const KrylovProfile& profile() const { return profile_; }
  void reset_profile() { profile_ = {}; }

 private:
  struct Context;
  SolveStatus solve(Context& c, const Vector& b, Vector& x);
  SolveStatus cg(Context& c, const Vector& b, Vector& x);
  SolveStatus bicgstab(Context& c, const Vector& b, Vector& x);
  SolveStatus gmres(Context& c, const Vector& b, Vector& x, bool flexible);
  SolveStatus gmres_dcgs2(Context& c, const Vector& b, Vector& x, bool flexible);
  void gmres_update(Context& c, int j, const double* y, bool flexible, GemvKernel gk, Vector& x);
  bool gmres_cycle_end(Context& c, const Vector& b, Vector& x, bool breakdown, double& beta);
  SolveStatus idr(Context& c, const Vector& b, Vector& x);
  void ensure_workspace(size64_t n, int nvec);
  void ensure_bases(size64_t n, int m, bool flexible);
  // Before iteration j of a GMRES cycle: V's columns 0 .. j + 1 and (flexible) Z's 0 .. j exist.
  void grow_bases(int j, bool flexible);
  void ensure_shadow_space(const Context& c, size64_t n, int s);

  ExecPtr exec_;
  KrylovConfig config_;
  bool profiling_ = false;
  KrylovProfile profile_;
  std::unique_ptr<PhaseTimer> timer_;
  std::vector<Vector> work_;
  std::vector<Vector> shadow_;  // IDR(s): the s orthonormal columns of P, kept while n and s stay
  // GMRES(m), FGMRES(m): the basis V (m + 1 columns), FGMRES's preconditioned basis Z (m
  // columns), and device scratch for the Gram–Schmidt coefficients and norm.
  // The columns are added as cycles reach them, basis_chunk at a time, and kept for later solves: a solve that
  // converges in a few iterations never holds all m + 1 (FGMRES(30) at block size 2: 976 bytes a cell in full).
  std::unique_ptr<MultiVector> basis_v_, basis_z_;
  int basis_m_ = 0;  // the restart the bases are for
  static constexpr int basis_chunk = 8;
  Array<double> gs_scratch_;
};

}  // namespace blockres
