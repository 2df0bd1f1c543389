// CPR two-stage preconditioner (linalg/preconditioners/cpr/cpr_preconditioner.hpp) on the CPR kernels (kernels/cpr/cpr.hpp).
#include "linalg/preconditioners/cpr/cpr_preconditioner.hpp"

#include "linalg/allocation.hpp"

#include "kernels/batched/block_diag.hpp"
#include "kernels/cpr/cpr.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace blockres {

namespace {

std::unique_ptr<Preconditioner> make_stage(const PreconditionerSpec& s, const ExecPtr& exec, const char* which)
{
  if (const PreconditionerEntry* e = find_preconditioner(s.type); e && !e->cpr_stage)
    throw std::invalid_argument(fmt::format("cpr: the {} stage cannot itself be {}", which, s.type));
  return make_preconditioner(exec, s);
}

// The weights as the run's log and results have always named them ("quasi-impes"); the deck and
// to_string spell them with '_'.
std::string weights_label(CprWeights w)
{
  std::string s(to_string(w));
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

}  // namespace

CprPreconditioner::CprPreconditioner(ExecPtr exec, CprOptions opt)
    : exec_(std::move(exec)),
      opt_(opt),
      stage1_(make_stage(opt.pressure, exec_, "pressure")),
      stage2_(make_stage(opt.second, exec_, "second")),
      timer_(std::make_unique<PhaseTimer>(*exec_))
{
  if (opt_.graph && exec_->is_cuda()) graph_ = std::make_unique<StreamGraph>(exec_);
}

std::vector<Preconditioner::ProfileEntry> CprPreconditioner::profile() const
{
  timer_->collect(seconds_);
  std::vector<ProfileEntry> parts = {{"pressure pattern (once per structure)", symbolic_seconds_},
                                     {"weights and pressure matrix", seconds_[PhaseTimer::cpr_weights]},
                                     {"pressure stage setup", seconds_[PhaseTimer::cpr_pressure_setup]},
                                     {"second stage setup", seconds_[PhaseTimer::cpr_second_setup]}};
  if (graph_ && !graph_failed_ && graph_ok()) {
    // The recording's size: its longest chain of dependent nodes is what a replay waits on at small sizes.
    const std::string shape =
        graph_->nodes() ? fmt::format(" of {} nodes, {} in the longest chain", graph_->nodes(), graph_->depth()) : "";
    parts.push_back({"both stages apply (one CUDA graph" + shape + ")", seconds_[PhaseTimer::cpr_graph_apply] +
                                                               seconds_[PhaseTimer::cpr_pressure_apply] +
                                                               seconds_[PhaseTimer::cpr_second_apply]});
  } else {
    parts.push_back({"pressure stage apply", seconds_[PhaseTimer::cpr_pressure_apply]});
    parts.push_back({"second stage apply", seconds_[PhaseTimer::cpr_second_apply]});
  }
  return parts;
}

std::string CprPreconditioner::setup_summary() const
{
  const std::string p = stage1_->setup_summary(), s = stage2_->setup_summary();
  if (p.empty()) return s.empty() ? std::string() : "second stage: " + s;
  return "pressure stage: " + p + (s.empty() ? std::string() : "; second stage: " + s);
}

CprPreconditioner::~CprPreconditioner() = default;

std::string CprPreconditioner::name() const
{
  return fmt::format("cpr({}; p: {}; 2: {})", weights_label(opt_.weights), stage1_->name(), stage2_->name());
}

void CprPreconditioner::set_accumulation_blocks(const Vector& C)
{
  if (opt_.weights != CprWeights::true_impes)
    throw std::invalid_argument("cpr: set_accumulation_blocks needs weights = true_impes");
  if (&C.exec() != exec_.get()) throw std::invalid_argument("cpr: set_accumulation_blocks: blocks on another executor");
  accumulation_ = &C;
}

void CprPreconditioner::symbolic(const BsrMatrix& A, const dist::DistBsrMatrix* Ad)
{
  const int bs = A.block_size();
  if (bs < 1 || bs > 64) throw std::invalid_argument(fmt::format("cpr: block size {} is not in 1..64", bs));
  BsrPattern p;
  p.nrows = A.nrows();
  p.ncols = A.ncols();
  p.row_ptr = A.row_ptr().to_host();
  p.col_ind = A.col_ind().to_host();
  // A new pressure pattern: a fresh stage 1, so that its own structure key (the row pointer's
  // address) cannot mistake the new A_p for the old one.
  if (ap_ || pd_) stage1_ = make_stage(opt_.pressure, exec_, "pressure");
  ap_.reset();
  pd_.reset();
  if (Ad) {
    pd_ = std::make_unique<dist::DistBsrMatrix>(*Ad, 1);
    col_offd_ = Ad->offd() ? Vector(exec_, size64_t(Ad->offd()->nnzb()) * bs) : Vector();
    r3_ = Vector(exec_, size64_t(A.nrows()) * bs);
  } else {
    ap_ = std::make_unique<BsrMatrix>(exec_, 1, p);
    col_offd_ = Vector();
    r3_ = Vector();
  }
  Ad_ = Ad;
  const index_t n = A.nrows();
  if (w_.size() != size64_t(n) * bs) w_ = Vector(exec_, size64_t(n) * bs);
  if (col_.size() != size64_t(A.nnzb()) * bs) col_ = Vector(exec_, size64_t(A.nnzb()) * bs);
  if (opt_.weights == CprWeights::true_impes) {
    std::vector<index_t> id(static_cast<std::size_t>(n));
    std::iota(id.begin(), id.end(), index_t(0));
    block_index_ = to_executor(exec_, id);
  }
  info_ = Array<int>(exec_, std::max<index_t>(n, 1));
  counter_ = Array<index_t>(exec_, 1);
  rp_ = Vector(exec_, n);
  xp_ = Vector(exec_, n);
  r2_ = Vector(exec_, size64_t(n) * bs);
  if (graph_) {
    rin_ = Vector(exec_, size64_t(n) * bs);
    zout_ = Vector(exec_, size64_t(n) * bs);
  }
  pattern_key_ = A.pattern_id();
  nrows_ = n;
  nnzb_ = A.nnzb();
  bs_ = bs;
}

SetupStatus CprPreconditioner::setup(const BsrMatrix& A) { return setup_on(A, nullptr); }

SetupStatus CprPreconditioner::setup_distributed(const dist::DistBsrMatrix& A)
{
  return A.comm().size() == 1 ? setup_on(A.diag(), nullptr) : setup_on(A.diag(), &A);
}

SetupStatus CprPreconditioner::setup_on(const BsrMatrix& A, const dist::DistBsrMatrix* Ad)
{
  if (A.diag_pos().empty())
    throw std::invalid_argument("cpr needs a square matrix with every diagonal block in the pattern");
  if (&A.exec() != exec_.get()) throw std::invalid_argument("cpr: the matrix lives on another executor");
  if (pattern_key_ != A.pattern_id() || nrows_ != A.nrows() || nnzb_ != A.nnzb() || bs_ != A.block_size() ||
      Ad != Ad_) {
    const auto t0 = std::chrono::steady_clock::now();
    const AllocationLabel label("the CPR pressure matrix and weights");
    symbolic(A, Ad);
    symbolic_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  A_ = &A;
  const index_t n = nrows_;
  timer_->collect(seconds_);  // the brackets of the last setup and applies (finished by now)
  if (opt_.weights == CprWeights::true_impes) {
    if (!accumulation_)
      throw std::invalid_argument("cpr: weights = true_impes but no accumulation blocks were given "
                                  "(set_accumulation_blocks)");
    if (accumulation_->size() != size64_t(n) * bs_ * bs_)
      throw std::invalid_argument(fmt::format("cpr: {} accumulation block values for {} cells of block size {}",
                                              accumulation_->size(), n, bs_));
  }
  // The IMPES weights: the same solve D^T w = e_0 on the diagonal blocks of A (quasi) or on the
  // accumulation blocks (true, block r of C at position r).
  const bool true_impes = opt_.weights == CprWeights::true_impes;
  const index_t* block_pos = true_impes ? block_index_.data() : A.diag_pos().data();
  const double* blocks = true_impes ? accumulation_->data() : A.values().data();
  index_t failed = 0;
  // The pressure matrix's values: of ap_, or distributed of pd_'s parts (the offd blocks' rows are owned rows, so
  // the same weights apply).
  double* ap_values = pd_ ? pd_->diag_values().data() : ap_->values().data();
  const BsrMatrix* offd = pd_ && Ad_->offd() ? &*Ad_->offd() : nullptr;
  timer_->begin(PhaseTimer::cpr_weights);
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    const auto s = exec_->stream();
    kernels::cuda::cpr_quasi_impes_weights(s, n, bs_, block_pos, blocks, w_.data(), info_.data());
    failed = kernels::cuda::count_nonzero(s, n, info_.data(), counter_.data());
    if (failed == 0) {
      kernels::cuda::cpr_pressure_values(s, n, bs_, A.row_ptr().data(), A.values().data(), w_.data(), ap_values,
                                         col_.data());
      if (offd)
        kernels::cuda::cpr_pressure_values(s, n, bs_, offd->row_ptr().data(), offd->values().data(), w_.data(),
                                           pd_->offd_values()->data(), col_offd_.data());
    }
#endif
  } else {
    kernels::cpu::cpr_quasi_impes_weights(n, bs_, block_pos, blocks, w_.data(), info_.data());
    failed = kernels::cpu::count_nonzero(n, info_.data());
    if (failed == 0) {
      kernels::cpu::cpr_pressure_values(n, bs_, A.row_ptr().data(), A.values().data(), w_.data(), ap_values,
                                        col_.data());
      if (offd)
        kernels::cpu::cpr_pressure_values(n, bs_, offd->row_ptr().data(), offd->values().data(), w_.data(),
                                          pd_->offd_values()->data(), col_offd_.data());
    }
  }
  timer_->end(PhaseTimer::cpr_weights);
  if (failed != 0) {
    const auto info = info_.to_host();
    const auto first = std::find_if(info.begin(), info.end(), [](int v) { return v != 0; }) - info.begin();
    return {false, fmt::format("cpr ({} weights): {} singular {} block(s), the first at block row {} (pivot {})",
                               weights_label(opt_.weights), failed, true_impes ? "accumulation" : "diagonal", first,
                               info[first]),
            ""};
  }
  timer_->begin(PhaseTimer::cpr_pressure_setup);
  std::optional<AllocationLabel> label(std::in_place, "the CPR pressure stage");
  auto st1 = pd_ ? stage1_->setup_distributed(*pd_) : stage1_->setup(*ap_);
  timer_->end(PhaseTimer::cpr_pressure_setup);
  if (!st1.ok) return {false, "cpr pressure stage: " + st1.message, st1.hint};
  timer_->begin(PhaseTimer::cpr_second_setup);
  label.emplace("the CPR second stage");
  auto st2 = Ad_ ? stage2_->setup_distributed(*Ad_) : stage2_->setup(A);
  timer_->end(PhaseTimer::cpr_second_setup);
  if (!st2.ok) return {false, "cpr second stage: " + st2.message, st2.hint};
  return {};
}

std::uint64_t CprPreconditioner::launch_epoch() const
{
  if (!A_ || pd_) return 0;  // distributed: halo exchanges through the host, never recorded
  const std::uint64_t e1 = stage1_->launch_epoch(), e2 = stage2_->launch_epoch();
  if (e1 == 0 || e2 == 0) return 0;
  LaunchKey k;
  k.add(*A_).add(*ap_).add(w_).add(col_).add(rp_).add(xp_).add(r2_).add(rin_).add(zout_);
  return k.add(std::uint64_t(nrows_)).add(std::uint64_t(bs_)).add(e1).add(e2).value();
}

double CprPreconditioner::apply_bytes() const
{
  if (!A_) return 0.0;
  const double b1 = stage1_->apply_bytes(), b2 = stage2_->apply_bytes();
  if (b1 == 0.0 || b2 == 0.0) return 0.0;
  const double n = nrows_, v = 8.0 * n * bs_, p = 8.0 * n, nnzb = A_->nnzb();
  double bytes = 2.0 * v + p + b1;  // restriction (w and r read, r_p written), pressure stage
  // r2 = r - A P x_p: the copy of column 0 of every block, the columns and row pointers, x_p, r read, r2 written
  bytes += nnzb * (8.0 * bs_ + 4.0) + 4.0 * (n + 1.0) + p + 2.0 * v;
  bytes += b2 + (p + 2.0 * v);  // second stage; z += P x_p
  if (graph_ && !graph_failed_ && graph_ok()) bytes += 4.0 * v;  // the copies in and out of the recording
  if (pd_ && Ad_->offd()) {  // r3 = r2 - A_offd x1: the offd blocks' column 0, their columns, ghost pressures, r2, r3
    const double no = Ad_->offd()->nnzb();
    bytes += no * (8.0 * bs_ + 4.0) + 4.0 * (n + 1.0) + 8.0 * Ad_->map().ghosts() + 2.0 * v;
  }
  return bytes;
}

void CprPreconditioner::apply(const Vector& r, Vector& z) const
{
  if (!A_) throw std::logic_error("cpr: apply before setup");
  if (r.size() != size64_t(nrows_) * bs_ || z.size() != r.size())
    throw std::invalid_argument("cpr apply: vector sizes do not match the setup matrix");
  if (graph_ && !graph_failed_ && graph_ok() && !StreamGraph::capturing(*exec_)) {
    copy(r, rin_);
    // A recording stays valid while every array it points to stays where it was (setups that
    // rewrite values in place); launch_epoch() says when that is no longer sure.
    const std::uint64_t epoch = launch_epoch();
    if (!graph_->ready() || epoch == 0 || epoch != recorded_epoch_) {
      if (!graph_->record([&] { apply_stages(rin_, zout_); })) {
        graph_failed_ = true;  // something in a stage cannot be recorded: launch directly from now on
        apply_stages(r, z);
        return;
      }
      recorded_epoch_ = epoch;
      ++recordings_;
    }
    timer_->begin(PhaseTimer::cpr_graph_apply);
    graph_->replay();
    timer_->end(PhaseTimer::cpr_graph_apply);
    copy(zout_, z);
    return;
  }
  apply_stages(r, z);
}

void CprPreconditioner::apply_stages(const Vector& r, Vector& z) const
{
  const index_t n = nrows_;
  // Stage 1: x_p = M_p^{-1} W^T r (x1 = P x_p: x_p in unknown 0 of every cell).
  timer_->begin(PhaseTimer::cpr_pressure_apply);
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    kernels::cuda::cpr_restrict(exec_->stream(), n, bs_, w_.data(), r.data(), rp_.data());
#endif
  } else {
    kernels::cpu::cpr_restrict(n, bs_, w_.data(), r.data(), rp_.data());
  }
  stage1_->apply(rp_, xp_);
  timer_->end(PhaseTimer::cpr_pressure_apply);
  timer_->begin(PhaseTimer::cpr_second_apply);
  // Stage 2 on the remaining residual: z = x1 + M_2^{-1} (r - A x1). A x1 reads column 0 of A's
  // blocks only (x1 is zero in the other unknowns): a bs-th of a product with A.
  // Distributed: the ghosts' pressures travel while the owned columns' part is formed, then r3 = r2 - A_offd x1.
  const auto& A = *A_;
  const BsrMatrix* offd = pd_ && Ad_->offd() ? &*Ad_->offd() : nullptr;
  if (pd_) pd_->start_exchange(xp_);
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    kernels::cuda::cpr_pressure_residual(exec_->stream(), n, bs_, A.row_ptr().data(), A.col_ind().data(),
                                         col_.data(), xp_.data(), r.data(), r2_.data());
#endif
  } else {
    kernels::cpu::cpr_pressure_residual(n, bs_, A.row_ptr().data(), A.col_ind().data(), col_.data(), xp_.data(),
                                        r.data(), r2_.data());
  }
  if (pd_) pd_->finish_exchange();
  if (offd) {
    const double* xg = pd_->ghost_values().data();
    if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
      kernels::cuda::cpr_pressure_residual(exec_->stream(), n, bs_, offd->row_ptr().data(), offd->col_ind().data(),
                                           col_offd_.data(), xg, r2_.data(), r3_.data());
#endif
    } else {
      kernels::cpu::cpr_pressure_residual(n, bs_, offd->row_ptr().data(), offd->col_ind().data(), col_offd_.data(),
                                          xg, r2_.data(), r3_.data());
    }
  }
  stage2_->apply(offd ? r3_ : r2_, z);
  if (exec_->is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    kernels::cuda::cpr_prolong_add(exec_->stream(), n, bs_, xp_.data(), z.data());
#endif
  } else {
    kernels::cpu::cpr_prolong_add(n, bs_, xp_.data(), z.data());
  }
  timer_->end(PhaseTimer::cpr_second_apply);
}

}  // namespace blockres
