// The AMG hierarchy of a distributed run (issue 33): AmgPreconditioner::setup_distributed on several ranks.
//
// Levels are distributed like the matrix: each rank holds its owned rows of every level's operator in "local form"
// (columns: its owned rows, then its ghosts in the level's IndexMap order), so every kernel of the serial hierarchy
// (amg_ops.hpp) runs unchanged on the rank's rows after one halo exchange of the vector it reads.
//   aggregation   inside each rank's rows (the strength graph of the owned x owned part: Ops::strength_graph's
//                 n_local), so P0 and R = P^T never leave the rank;
//   smoothed P    P = (I - omega D^-1 A_f) P0 with A_f the owned x owned part of A whose rows keep their ghost
//                 couplings as a sum on the diagonal (kernels::*::lump_ghost_columns; D and omega are A's): the P every
//                 rank builds alone, with the row sums of the serial smoothing (constants stay interpolated);
//   Galerkin      A_c = R (A P_ext), P_ext = P's rows plus the rows of P its ghosts have on their owners (fetched
//                 once per structure, their values every numeric setup through a halo of P's values): the exact
//                 Galerkin product of the global P, whose coarse rows are again owned rows in local form;
//   agglomeration the first level with at most AmgOptions::gather_rows rows in all is gathered onto every rank
//                 (one allgather of its rows per setup), which continues it as one serial AmgPreconditioner (its
//                 coarsest level on one GPU per rank, computed redundantly; each rank keeps its own rows of the
//                 result): the coarse levels cost one gather of the residual a cycle instead of halo exchanges
//                 on tiny subdomains;
//   cycle         the serial V/W-cycle, with a halo exchange of x before every residual and every sweep that
//                 starts from a nonzero x (a sweep from zero needs none): two exchanges a level and cycle.
// A problem of at most gather_rows rows in all is gathered at its finest level: the replicated serial hierarchy,
// whose cycle is the serial one.
#pragma once

#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/distributed/halo_channel.hpp"
#include "linalg/preconditioners/amg/amg.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace blockres::amg {

struct DistLevel;

class DistHierarchy {
 public:
  // opt: the preconditioner's options (Jacobi or l1-Jacobi smoother).
  DistHierarchy(ExecPtr exec, const AmgOptions& opt);
  ~DistHierarchy();
  DistHierarchy(const DistHierarchy&) = delete;
  DistHierarchy& operator=(const DistHierarchy&) = delete;

  // All collective; A has block size 1 and stays alive, with these values, while the hierarchy is applied. The
  // status is this rank's; a failure on any rank fails every rank's (with the failing rank's message there).
  SetupStatus setup_full(const dist::DistBsrMatrix& A);
  // Values on the aggregates and patterns of the last full setup (A: the same matrix object).
  SetupStatus refresh_numeric(const dist::DistBsrMatrix& A);
  // The finest operator from A's current values, the rest of the hierarchy kept (refresh_interval, refresh_growth).
  void keep(const dist::DistBsrMatrix& A);
  // A is the matrix of the last full setup (a distributed matrix never changes its pattern).
  bool same_structure(const dist::DistBsrMatrix& A) const;

  // z = one cycle (opt.cycles of them) on r, this rank's owned rows. Collective.
  void apply(const Vector& r, Vector& z) const;

  // Global rows and entries of every level (the distributed levels, then the gathered hierarchy's), finest first;
  // whether the coarsest is solved directly.
  void statistics(AmgStatistics& s) const;
  int distributed_levels() const { return gathered_at_ < 0 ? int(levels_.size()) : gathered_at_; }
  int gathered_at() const { return gathered_at_; }  // -1: coarsening stopped before a level was small enough
  const AmgPreconditioner* gathered() const { return tail_.get(); }

  // Tests: level l's operator (owned rows, columns as global ids of the level), its P (owned rows; columns global
  // coarse ids) and the level's owned global ids. Collective-free host copies.
  struct HostLevel {
    std::vector<dist::gindex_t> owned;
    std::vector<index_t> a_ptr, p_ptr;
    std::vector<dist::gindex_t> a_col, p_col;
    std::vector<double> a_val, p_val;
  };
  HostLevel level_host(int l) const;
  int num_levels() const { return int(levels_.size()); }
  // Wall time of the full setups so far (host work on the patterns included; waits for the device at the end).
  double full_setup_seconds() const { return full_seconds_; }

 private:
  void fine_values(const dist::DistBsrMatrix& A);  // level 0's local form from A's diag and offd parts
  void adopt_orphans(const DistLevel& L, Array<index_t>& agg) const;
  void transfer_symbolic(int l, Array<index_t> agg, index_t nc);  // P, R, P_ext, A P_ext, next level
  void numeric_level(int l);
  SetupStatus finish();  // smoothers, the gathered level's values and its serial setup; statuses agreed
  void gather_symbolic(int l);
  SetupStatus gather_numeric();
  void exchange(const DistLevel& L, double* x) const;  // x: the level's local ids, ghosts filled by the call
  void cycle(int l, bool zero_guess) const;
  CycleRef op(const DistLevel& L) const;
  CycleRef transfer(const Matrix& M, const Array<float>& m32) const;

  ExecPtr exec_;
  AmgOptions opt_;
  std::unique_ptr<Ops> ops_;
  dist::CommPtr comm_;
  const dist::DistBsrMatrix* fine_ = nullptr;
  std::vector<std::unique_ptr<DistLevel>> levels_;
  int gathered_at_ = -1;
  int plain_fallbacks_ = 0;
  Array<index_t> status_;  // each smoothed level's first row with a bad smoother scaling (INT_MAX: none)
  double full_seconds_ = 0.0;  // this rank's levels given a plain P (a smoothed product too large)
  std::vector<AmgLevelStatistics> dist_stats_;  // global rows and entries of the distributed levels
  // The gathered level: its whole operator (rows by global id, columns sorted) on every rank, the serial hierarchy
  // on it; the permutation from the gathered entries to its pattern, the global id of every gathered row (ranks'
  // rows in rank order), this rank's rows' global ids (executor memory), the cycle's vectors.
  std::optional<BsrMatrix> whole_;
  std::unique_ptr<AmgPreconditioner> tail_;
  std::vector<index_t> whole_perm_, whole_rows_;
  Array<index_t> own_rows_;
  mutable Vector whole_b_, whole_x_;
  // Device to device (NCCL): every rank's row count of the gathered level, the gathered position of every global
  // row (executor memory) and the gathered right-hand side before that permutation.
  std::shared_ptr<const dist::DeviceComm> dcomm_;
  std::vector<std::size_t> gather_counts_;
  Array<index_t> whole_from_;
  mutable Array<double> whole_all_;

 public:
  // The gathered hierarchy, when the finest level itself is gathered, takes the time loop's feedback.
  void note_new_step();
  void note_solve(int iterations, bool converged);
};

}  // namespace blockres::amg
