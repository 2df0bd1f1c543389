// CPR (constrained pressure residual) two-stage preconditioner: a pressure stage on the scalar
// pressure matrix W^T A P, then a second stage on the full system, combined multiplicatively.
#pragma once

#include "linalg/phase_timer.hpp"
#include "linalg/stream_graph.hpp"
#include "linalg/preconditioners/cpr/cpr_options.hpp"
#include "linalg/preconditioners/preconditioner.hpp"

#include <array>
#include <cstdint>
#include <memory>

namespace blockres {

// For A in BSR with block size bs (1..64) whose unknown 0 of every cell is the pressure:
//   w_i    decoupling weights per cell (CprWeights: quasi-IMPES w_i = D_ii^{-T} e_0, or true-IMPES
//          w_i = C_i^{-T} e_0 with C_i the cell's accumulation block given by
//          set_accumulation_blocks, both scaled to max |w_i| = 1 and computed on the executor every
//          setup);
//   A_p    the bs = 1 pressure matrix on A's block pattern, A_p(i, j) = w_i^T A_ij e_0, formed on
//          the executor every setup (pattern once per structure);
//   apply  x1 = P M_p^{-1} W^T r  (restriction r_p,i = w_i^T r_i, prolongation into unknown 0),
//          r2 = r - A x1 (column 0 of A's blocks only: x1 is zero elsewhere),  z = x1 + M_2^{-1} r2,
// with M_p any preconditioner on A_p (stage 1) and M_2 any preconditioner on A (stage 2), both
// made through the registry (linalg/preconditioners/registry.hpp). Exactness: with quasi-IMPES
// weights w_i^T A_ii S = 0 (S the non-pressure unknowns); when every off-diagonal block A_ij has
// nonzeros in column 0 only, also w_i^T A_ij S = 0, so W^T A = A_p P^T and an exact stage 1 leaves
// an error without pressure part, which block-Jacobi (D^{-1} of the off-diagonal part sees only
// pressures) removes exactly: then z = A^{-1} r (test/test_cpr_preconditioner.cpp checks this).
// apply() uses A itself (the SpMV of stage 2's residual): the matrix given to setup() must stay
// alive with the same values until the next setup. A stage whose setup fails, or a cell whose
// weights cannot be computed (singular diagonal or accumulation block), fails the setup with a
// message.
class CprPreconditioner final : public Preconditioner {
 public:
  explicit CprPreconditioner(ExecPtr exec, CprOptions opt = {});
  ~CprPreconditioner() override;
  SetupStatus setup(const BsrMatrix& A) override;
  // Several ranks (issue 33): the weights of the owned rows, the pressure matrix distributed like A (owned x owned
  // and owned x ghost parts), the pressure stage set up on it across the ranks (setup_distributed: AMG's distributed
  // hierarchy) and the second stage through its setup_distributed; apply() then exchanges the ghosts' pressures for
  // r - A x1 and is never recorded as a graph. One rank: setup(A.diag()).
  SetupStatus setup_distributed(const dist::DistBsrMatrix& A) override;
  void apply(const Vector& r, Vector& z) const override;
  std::string name() const override;
  void note_new_step() override
  {
    stage1_->note_new_step();
    stage2_->note_new_step();
  }
  void note_solve(int iterations, bool converged) override
  {
    stage1_->note_solve(iterations, converged);
    stage2_->note_solve(iterations, converged);
  }
  // Weights and pressure matrix, pressure-stage setup, second-stage setup, pressure-stage apply
  // (restriction and prolongation included), second-stage apply (residual update included); with
  // the application as one graph (CprOptions::graph, CUDA) the two applies are one entry.
  std::vector<ProfileEntry> profile() const override;
  // "pressure stage: <its summary>; second stage: <its summary>" for the stages that have one.
  std::string setup_summary() const override;
  // Its own arrays, A's and both stages' (0 when a stage does not track its launches).
  std::uint64_t launch_epoch() const override;
  // Restriction, both stages (0 when either does not state its bytes), the prolongations, the
  // residual update with A (and the copies in and out of a recording).
  double apply_bytes() const override;
  // CprOptions::graph: how many times the application was recorded (a setup that keeps every
  // stage's launch_epoch keeps the recording).
  int recordings() const { return recordings_; }

  // weights = true_impes: the accumulation blocks (Preconditioner::set_accumulation_blocks);
  // set_accumulation_blocks throws std::invalid_argument with the other weights.
  bool needs_accumulation_blocks() const override { return opt_.weights == CprWeights::true_impes; }
  void set_accumulation_blocks(const Vector& C) override;

  // After setup: the weights (bs per cell) and the pressure matrix.
  const Vector& weights() const { return w_; }
  const BsrMatrix* pressure_matrix() const { return pd_ ? &pd_->diag() : ap_.get(); }
  // After a distributed setup on several ranks: the distributed pressure matrix, else nullptr.
  const dist::DistBsrMatrix* distributed_pressure_matrix() const { return pd_.get(); }
  const Preconditioner& pressure_stage() const { return *stage1_; }
  const Preconditioner& second_stage() const { return *stage2_; }

 private:
  void symbolic(const BsrMatrix& A, const dist::DistBsrMatrix* Ad);
  SetupStatus setup_on(const BsrMatrix& A, const dist::DistBsrMatrix* Ad);  // Ad: A is its diag part
  void apply_stages(const Vector& r, Vector& z) const;  // the application's launches (or CPU work)

  ExecPtr exec_;
  CprOptions opt_;
  std::unique_ptr<Preconditioner> stage1_, stage2_;
  const BsrMatrix* A_ = nullptr;
  // Distributed (several ranks): the matrix (A_ is its diag part), the pressure matrix distributed like it (ap_ is
  // then not made), column 0 of the offd blocks, the stage-2 residual after the ghosts' pressures.
  const dist::DistBsrMatrix* Ad_ = nullptr;
  std::unique_ptr<dist::DistBsrMatrix> pd_;
  Vector col_offd_;
  mutable Vector r3_;
  std::uint64_t pattern_key_ = 0;  // BsrMatrix::pattern_id() of the last symbolic setup
  index_t nrows_ = 0;
  index_t nnzb_ = -1;
  int bs_ = 0;
  const Vector* accumulation_ = nullptr;  // true_impes
  Array<index_t> block_index_;            // true_impes: 0, 1, .., n-1 (block r of C is cell r's)
  Vector w_;
  Vector col_;  // column 0 of every block of A (cpr_pressure_values' copy, read by each application)
  Array<int> info_;
  Array<index_t> counter_;
  std::unique_ptr<BsrMatrix> ap_;
  mutable Vector rp_, xp_, r2_;
  // CprOptions::graph on CUDA: the application recorded after each setup on fixed vectors rin_ ->
  // zout_ (the callers' vectors are copied in and out); off for good after a recording failed.
  std::unique_ptr<StreamGraph> graph_;
  mutable Vector rin_, zout_;
  mutable bool graph_failed_ = false;
  // Whether the application is recorded: serially only. Distributed, a halo through the host waits for the stream,
  // which a recording cannot hold; with NCCL halos it can be recorded, but the replay was slower than launching on
  // two H200 (session 51: 1435 against 686 us a linear iteration at 72k cells, preconditioner apply 1.54 against
  // 1.15 s at 10M cells), so it is not.
  bool graph_ok() const { return !pd_; }
  mutable std::uint64_t recorded_epoch_ = 0;  // launch_epoch() of the recording
  mutable int recordings_ = 0;
  // Stage profile: brackets collected at every setup (the earlier work has finished by then).
  std::unique_ptr<PhaseTimer> timer_;
  mutable std::array<double, PhaseTimer::num_phases> seconds_{};
  double symbolic_seconds_ = 0.0;  // host wall time of symbolic(): once per matrix structure
};

}  // namespace blockres
