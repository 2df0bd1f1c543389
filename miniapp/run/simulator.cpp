// Backward-Euler time stepping with an inexact Newton solver (Appleyard chops, cut-and-retry, growth,
// fixed or Eisenstat–Walker forcing terms), report times hit exactly, one log line per step and a
// summary at the end.
#include "miniapp/run/simulator.hpp"

#include "input/error.hpp"
#include "linalg/allocation.hpp"
#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/distributed/dist_vector_ops.hpp"
#include "linalg/krylov.hpp"
#include "linalg/phase_timer.hpp"
#include "linalg/preconditioners/preconditioner.hpp"
#include "linalg/preconditioners/registry.hpp"
#include "miniapp/run/forcing.hpp"
#include "miniapp/run/restart.hpp"
#include "miniapp/run/run_control.hpp"
#include "miniapp/run/threads.hpp"
#include "miniapp/io/background_writer.hpp"
#include "miniapp/io/vtk_output.hpp"
#include "physics/model_registry.hpp"
#include "physics/subdomain.hpp"
#include "physics/units.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

namespace blockres {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// interrupt_signal() of any rank (a signal to one rank stops all at the same point); one rank: its own.
int run_signal(const dist::Communicator& comm) { return comm.max(interrupt_signal()); }

struct NewtonResult {
  bool converged = false;
  int iterations = 0;         // linear solves performed
  int linear_iterations = 0;
  physics::ConvergenceNorms norms;
  std::string failure;        // why it failed
  std::string hint;           // what to use instead (a preconditioner setup's hint), for the final message
  bool linear_failed = false; // the linear solver or its preconditioner setup failed
  bool interrupted = false;   // abandoned on a signal (interrupt_signal())
  std::vector<NewtonRecord> records;  // one per linear solve; step and attempt are the caller's
  std::vector<WellSwitchRecord> switches;  // well control switches by iteration; step, attempt, time the caller's
};

class NewtonSolver {
 public:
  using Log = std::function<void(const std::string&)>;
  // sub: the rank's part of the grid, on which the model works. Distributed, the model assembles its Jacobian over its
  // cells and ghost cells straight into a distributed matrix (the owned rows into its diag and offd parts, the ghost
  // cells' rows, which no product reads, after them; Model::set_block_storage); Krylov works on the whole distributed
  // system, the preconditioner through setup_distributed (most on the owned x owned part: additive Schwarz without
  // overlap; AMG and CPR's pressure stage across the ranks).
  NewtonSolver(const RunConfig& cfg, ExecPtr exec, physics::Model& model, const physics::Subdomain& sub,
               RunStatistics& stats, Log trace)
      : cfg_(cfg),
        exec_(exec),
        model_(model),
        sub_(sub),
        stats_(stats),
        R_(exec, size64_t(model.pattern().nrows) * model.block_size()),
        dx_(exec, size64_t(model.pattern().nrows) * model.block_size()),
        krylov_(exec, cfg.linear.krylov),
        precond_(make_preconditioner(exec, cfg.linear.preconditioner)),
        forcing_(cfg.linear.forcing, cfg.linear.krylov.rel_tol),
        trace_(std::move(trace))
  {
    const int bs = model.block_size();
    const size64_t owned_rows = size64_t(sub.owned()) * bs;
    const AllocationLabel label("the Jacobian");
    if (sub.distributed()) {
      const BsrPattern& p = model.pattern();
      const index_t nown = sub.owned();
      std::vector<dist::gindex_t> owned(static_cast<std::size_t>(nown));
      std::vector<dist::gindex_t> gcol(static_cast<std::size_t>(p.row_ptr[std::size_t(nown)]));
      for (index_t r = 0; r < nown; ++r) owned[std::size_t(r)] = sub.cells().global(r);
      for (std::size_t k = 0; k < gcol.size(); ++k) gcol[k] = sub.cells().global(p.col_ind[k]);
      Jd_.emplace(exec, sub.comm_ptr(), bs, std::move(owned),
                  std::span<const index_t>(p.row_ptr.data(), std::size_t(nown) + 1), gcol,
                  [&sub](dist::gindex_t g) { return sub.owner(g); }, p.nnzb() - p.row_ptr[std::size_t(nown)]);
      model.set_block_storage(Jd_->block_storage());
    } else {
      J_.emplace(exec, bs, model.pattern());
    }
    R_own_ = Vector::view(exec, R_.data(), owned_rows);
    dx_own_ = Vector::view(exec, dx_.data(), owned_rows);
    // Phase times for the run summary and /statistics; events on the stream, no extra syncs.
    krylov_.set_profiling(true);
    // The model's accumulation blocks (true-IMPES CPR weights), refreshed before every setup.
    if (precond_->needs_accumulation_blocks()) {
      if (!model.has_accumulation_blocks())
        throw std::invalid_argument(fmt::format(
            "solver.linear.preconditioner.weights = \"true_impes\": model {} does not provide accumulation "
            "derivatives; use \"quasi_impes\"",
            model.type()));
      accumulation_ = Vector(exec, R_.size() * model.block_size());
      accumulation_own_ = Vector::view(exec, accumulation_.data(), owned_rows * bs);  // the owned cells' blocks
      precond_->set_accumulation_blocks(sub.distributed() ? accumulation_own_ : accumulation_);
      accumulation_used_ = true;
    }
  }

  // Serial runs only (a distributed run assembles into the distributed matrix's parts).
  const BsrMatrix& jacobian() const
  {
    if (!J_) throw std::logic_error("NewtonSolver::jacobian: a distributed run has no single Jacobian");
    return *J_;
  }
  // Serial: the setup on the Jacobian. Distributed: on the distributed matrix (collective), which gives block-Jacobi
  // over the subdomains for most preconditioners and a hierarchy across the ranks for AMG and CPR's pressure stage.
  SetupStatus setup_preconditioner()
  {
    const AllocationLabel label("the preconditioner");  // its parts may name themselves
    return Jd_ ? precond_->setup_distributed(*Jd_) : precond_->setup(*J_);
  }
  const KrylovProfile& linear_profile() const { return krylov_.profile(); }
  std::string preconditioner_name() const { return precond_->name(); }
  std::vector<Preconditioner::ProfileEntry> preconditioner_profile() const { return precond_->profile(); }
  std::string preconditioner_summary() const { return precond_->setup_summary(); }

  // The inputs of the first preconditioner setup, once it happened (for /restart/setup_*).
  const std::optional<SetupReplay>& first_setup() const { return first_setup_; }
  // The host copy of the first setup's state (x and x0, for the restart data), kept out of the setup time.
  double replay_copy_seconds() const { return replay_copy_seconds_; }

  // Repeats the first setup of the run being continued: the same Jacobian (assembled from the same
  // x, x0 and dt) gives a preconditioner that keeps structure across setups (AMG aggregates) the
  // structure the uninterrupted run has at this point. Not counted in the statistics.
  void replay_setup(const SetupReplay& r)
  {
    const int bs = model_.block_size();
    const Vector x(exec_, std::span<const double>(sub_.local_part(r.x, bs))),
        x0(exec_, std::span<const double>(sub_.local_part(r.x0, bs)));
    model_.begin_step(x0);
    assemble(x, x0, r.dt);
    if (accumulation_used_) model_.accumulation_blocks(x, r.dt, accumulation_);
    (void)setup_preconditioner();  // a failed setup failed the same way in the run that wrote it
    exec_->synchronize();
    first_setup_ = r;
  }

  // step: the 1-based number of the time step being attempted (for first_setup()).
  NewtonResult solve(Vector& x, const Vector& x0, double dt, int step)
  {
    const auto& nc = cfg_.newton;
    NewtonResult res;
    forcing_.begin_step();
    precond_->note_new_step();  // a preconditioner that keeps its setup within a step refreshes at the next one
    mb_history_.clear();
    for (int it = 0;; ++it) {
      if (run_signal(sub_.comm()) != 0) {
        res.interrupted = true;
        return fail(res, "interrupted");
      }
      auto t0 = Clock::now();
      adapt_threads_to_load();  // issue 20: fewer CPU threads while other work is runnable
      assemble(x, x0, dt);
      for (const physics::WellSwitch& sw : model_.take_well_switches()) res.switches.push_back({0, 0, it, 0.0, sw});
      res.norms = model_.convergence(x, R_, dt);  // synchronises
      const double assembly_s = seconds_since(t0);
      stats_.assembly_seconds += assembly_s;
      if (trace_) trace_(fmt::format("    newton {:2d}: {}", it, describe_norms(res.norms)));
      if (!res.norms.finite) return fail(res, "residual is not finite (NaN/Inf)");
      if (res.norms.max_cnv() <= nc.tol_cnv && res.norms.max_mb() <= nc.tol_mb) {
        res.converged = true;
        return res;
      }
      if (it == nc.max_iterations)
        return fail(res, fmt::format("no convergence in {} Newton iterations (CNV {:.2e}, MB {:.2e})",
                                     nc.max_iterations, res.norms.max_cnv(), res.norms.max_mb()));
      mb_history_.push_back(res.norms.max_mb());
      if (nc.predict_failure) {
        const double predicted = predict_newton_iterations(nc, mb_history_);
        if (predicted > 2.0 * nc.max_iterations)
          return fail(res, fmt::format("abandoned after {} Newton iterations: MB {:.2e} -> {:.2e} -> {:.2e} predicts {} "
                                       "iterations (more than 2 x max_iterations = {}; CNV {:.2e})",
                                       it, mb_history_[std::size_t(it) - 2], mb_history_[std::size_t(it) - 1],
                                       res.norms.max_mb(), std::ceil(predicted), 2 * nc.max_iterations,
                                       res.norms.max_cnv()));
      }
      if (!first_setup_) {  // for the result file's restart data: output work, not the preconditioner's
        const auto tc = Clock::now();
        const int bs = model_.block_size();  // the whole state (rank 0 writes it; the others keep none)
        first_setup_ = SetupReplay{step, dt, sub_.gather(x, bs), sub_.gather(x0, bs)};
        replay_copy_seconds_ = seconds_since(tc);
      }
      t0 = Clock::now();
      if (accumulation_used_) model_.accumulation_blocks(x, dt, accumulation_);  // same x and dt as the Jacobian
      SetupStatus setup = setup_preconditioner();
      if (!sub_.comm().all(setup.ok) && setup.ok)  // every rank stops when one fails
        setup = SetupStatus{false, "the preconditioner setup failed on another rank", ""};
      auto tw = Clock::now();
      exec_->synchronize();
      double wait_s = seconds_since(tw);  // the host waiting for queued device work (0 on the CPU)
      const double setup_s = seconds_since(t0);
      stats_.linear_setup_seconds += setup_s;
      if (!setup.ok) {
        res.hint = setup.hint, res.linear_failed = true;
        return fail(res, setup.message);
      }
      // The forcing term only sets how accurately J dx = R is solved. Newton itself still
      // converges on the scaled CNV / MB norms above, not on ||R||_2, which is in mixed units
      // and serves Eisenstat–Walker only as a measure of progress from one iteration to the next.
      const double norm_r =
          forcing_.needs_residual_norm() ? (Jd_ ? dist::norm2(sub_.comm(), R_own_) : norm2(R_)) : 0.0;
      KrylovConfig kc = cfg_.linear.krylov;
      kc.rel_tol = forcing_.next(norm_r);
      krylov_.set_config(kc);
      t0 = Clock::now();
      fill(dx_, 0.0);
      const SolveStatus ls = Jd_ ? krylov_.solve(*Jd_, *precond_, R_own_, dx_own_) : krylov_.solve(*J_, *precond_, R_, dx_);
      tw = Clock::now();
      exec_->synchronize();
      wait_s += seconds_since(tw);
      precond_->note_solve(ls.iterations, ls.converged);
      const double solve_s = seconds_since(t0);
      stats_.linear_solve_seconds += solve_s;
      res.linear_iterations += ls.iterations;
      stats_.max_linear_iterations = std::max(stats_.max_linear_iterations, ls.iterations);
      ++res.iterations;
      const double reduction = ls.initial_residual > 0 ? ls.residual / ls.initial_residual : 0.0;
      res.records.push_back({0, 0, it, ls.iterations, kc.rel_tol, reduction, ls.converged, ls.reason, assembly_s, setup_s,
                             solve_s, wait_s});
      if (trace_)
        trace_(fmt::format("    linear: {} iterations, residual reduced to {:.2e} (tolerance {:.2e}; {}); assembly {:.2f} "
                           "ms, setup {:.2f} ms, solve {:.2f} ms, of which waiting for the device {:.2f} ms",
                           ls.iterations, reduction, kc.rel_tol, to_string(ls.reason), 1e3 * assembly_s, 1e3 * setup_s,
                           1e3 * solve_s, 1e3 * wait_s));
      if (!ls.converged) {
        res.linear_failed = true;
        return fail(res, fmt::format("linear solver: {} after {} iterations (residual reduced to {:.2e})",
                                     to_string(ls.reason), ls.iterations, reduction));
      }
      model_.update(x, dx_, limits_);
      sub_.exchange(x, model_.block_size());  // the ghost cells' new state from their owners
    }
  }

 private:
  // R_ and the Jacobian at x: into J_, or distributed straight into Jd_'s parts.
  void assemble(const Vector& x, const Vector& x0, double dt)
  {
    model_.assemble(x, x0, dt, R_, Jd_ ? Jd_->storage() : J_->values());
  }

  // "CNV water 1.2e-03 oil 3.4e-04  MB ..."; with many equations only the largest of each.
  std::string describe_norms(const physics::ConvergenceNorms& n) const
  {
    if (n.cnv.size() > 4)
      return fmt::format("CNV max {:.2e}  MB max {:.2e} over {} equations", n.max_cnv(), n.max_mb(), n.cnv.size());
    std::string cnv = "CNV", mb = "MB";
    for (std::size_t e = 0; e < n.cnv.size(); ++e) {
      cnv += fmt::format(" {} {:.2e}", equations_[e], n.cnv[e]);
      mb += fmt::format(" {} {:.2e}", equations_[e], n.mb[e]);
    }
    return cnv + "  " + mb;
  }

  static NewtonResult& fail(NewtonResult& r, std::string why)
  {
    r.converged = false;
    r.failure = std::move(why);
    return r;
  }

  const RunConfig& cfg_;
  ExecPtr exec_;
  physics::Model& model_;
  const physics::Subdomain& sub_;
  const physics::UpdateLimits limits_{cfg_.newton.max_dp_rel, cfg_.newton.max_dsw, cfg_.newton.max_dx};
  const std::vector<std::string> equations_ = model_.equation_names();
  RunStatistics& stats_;
  Vector R_, dx_;
  std::optional<BsrMatrix> J_;             // serial: the Jacobian
  std::optional<dist::DistBsrMatrix> Jd_;  // distributed: the Jacobian (owned rows; ghost rows trailing)
  Vector R_own_, dx_own_;                  // views of R_ and dx_: the owned cells' entries
  KrylovSolver krylov_;
  std::unique_ptr<Preconditioner> precond_;
  bool accumulation_used_ = false;  // the preconditioner needs the accumulation blocks (true-IMPES CPR)
  Vector accumulation_;             // then: the model's accumulation blocks (bs^2 per cell)
  Vector accumulation_own_;         // a view of the owned cells' blocks
  ForcingSequence forcing_;
  std::vector<double> mb_history_;  // max MB norm before each update of the current solve
  std::optional<SetupReplay> first_setup_;
  double replay_copy_seconds_ = 0.0;
  Log trace_;
};

// The run log's line of a well control switch: time, well, from -> to, and the BHP that decided it
// against the limit.
std::string describe_well_switch(const physics::Model& model, const WellSwitchRecord& r)
{
  const physics::WellSwitch& c = r.change;
  const physics::WellInfo& w = model.wells().at(static_cast<std::size_t>(c.well));
  const double limit = c.bhp_limit / units::bar;
  std::string why;
  if (!c.reachable)
    why = fmt::format("no BHP meets its rate target (limit {:.2f} bar)", limit);
  else
    why = fmt::format("its rate target needs a BHP of {:.2f} bar, {} the limit {:.2f} bar", c.bhp_needed / units::bar,
                      c.to_bhp ? (w.injector ? "above" : "below") : "within", limit);
  return fmt::format("  well {}: {} at t = {:.6g} d (step {}, attempt {}, Newton iteration {}): {}", w.name,
                     c.to_bhp ? "rate -> BHP control" : "BHP -> rate control", r.time / units::day, r.step, r.attempt,
                     r.iteration, why);
}

}  // namespace

std::string format_duration(double seconds)
{
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds > 0 && seconds < 0.5) return "<1s";  // not "0s": that reads as done
  const long s = std::lround(seconds);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{}h{:02d}m", s / 3600, s % 3600 / 60);
}

std::string describe_progress(double t, double t_end, double t_start, double wall_seconds)
{
  const double fraction = t_end > 0 ? t / t_end : 1.0;
  // The simulated days per wall-clock second of this run so far, continued to the end: steps grow
  // from a short first one, so the estimate starts high and improves as the run goes on.
  const double left = t >= t_end                         ? 0.0
                      : t > t_start && wall_seconds > 0 ? (t_end - t) * wall_seconds / (t - t_start)
                                                        : -1.0;  // no pace yet: "?"
  return fmt::format("t {:10.4f} / {:.4f} d {:5.1f}%  ~{} left", t / units::day, t_end / units::day,
                     100.0 * fraction, format_duration(left));
}

void write_jacobian(const std::filesystem::path& path, const BsrMatrix& A)
{
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    auto f = h5::File::create(tmp);
    h5::write_attribute(f.id(), "layout_version", jacobian_layout_version);
    h5::Id g = h5::create_group(f.id(), "jacobian");
    h5::write_attribute(g, "block_size", std::int64_t(A.block_size()));
    h5::write_attribute(g, "block_rows", std::int64_t(A.nrows()));
    h5::write_dataset(g, "row_ptr", A.row_ptr().to_host());
    h5::write_dataset(g, "col_ind", A.col_ind().to_host());
    h5::write_dataset(g, "values", A.values().to_host());
    g.reset();
    f.close();
  }
  std::filesystem::rename(tmp, path);
}

// Steps that needed many Newton iterations are followed by shorter ones instead of by a longer
// retry that fails (each failure costs max_iterations Newton iterations).
double time_step_growth(const NewtonConfig& nc, int newton_iterations)
{
  if (nc.target_iterations <= 0 || newton_iterations <= 0) return nc.growth_factor;
  const double f = double(nc.target_iterations) / double(newton_iterations);
  return std::clamp(f, nc.cut_factor, nc.growth_factor);
}

double predict_newton_iterations(const NewtonConfig& nc, const std::vector<double>& mb)
{
  constexpr std::size_t min_iterations = 4;  // updates applied before the first prediction
  const std::size_t k = mb.empty() ? 0 : mb.size() - 1;
  if (k < min_iterations || !(mb[k] > nc.tol_mb) || !std::isfinite(mb[k - 2])) return 0.0;
  // Only a steady decrease is extrapolated: the slow linear phase of a Newton solve held back by
  // its update chops (a saturation front that moves a few cells per iteration). A norm that rises
  // on the way is the usual non-monotone start of a converging solve and predicts nothing.
  if (!(mb[k] < mb[k - 1] && mb[k - 1] < mb[k - 2])) return 0.0;
  const double rho = std::sqrt(mb[k] / mb[k - 2]);
  return double(k) + std::log(nc.tol_mb / mb[k]) / std::log(rho);
}

// Refuses an initial state with a pressure <= 0 (or not finite) anywhere (issue 28 item 8): a
// datum_depth typo puts the datum kilometres below the grid, and hydrostatic initialisation then
// gives negative pressures that a run never recovers from. Unknown 0 is the pressure of every model.
static void check_initial_pressure(const RunConfig& cfg, const physics::Grid& grid, int bs, std::span<const double> x)
{
  index_t worst = -1;
  for (index_t a = 0; a * bs < index_t(x.size()); ++a)
    if (!(x[std::size_t(a) * bs] > 0.0) && (worst < 0 || !(x[std::size_t(a) * bs] >= x[std::size_t(worst) * bs])))
      worst = a;
  if (worst < 0) return;
  // The keys as the run sees them (deck, --set overrides, defaults) from the resolved deck.
  std::optional<double> pressure, datum;
  try {
    const toml::table t = toml::parse(cfg.resolved_toml);
    pressure = t.at_path("initial.pressure").value<double>();
    datum = t.at_path("initial.datum_depth").value<double>();
  } catch (const toml::parse_error&) {
  }
  const index_t g = grid.global_of_active(worst);
  const int i = int(g % grid.nx()), j = int(g / grid.nx() % grid.ny()), k = int(g / (index_t(grid.nx()) * grid.ny()));
  const std::string given = pressure ? fmt::format(" = {} bar", *pressure) : "";
  const std::string cause =
      datum ? fmt::format("hydrostatic equilibrium through initial.pressure{} at initial.datum_depth = {} m gives", given,
                          *datum)
            : fmt::format("initial.pressure{} gives", given);
  throw InputError(fmt::format(
      "{}: initial.{}: non-physical initial pressure: {} p = {:.6g} bar in cell ({}, {}, {}) at depth {:.6g} m "
      "(the grid's layers lie at depths {:.6g} to {:.6g} m); every cell needs p > 0 after {} initialisation{}",
      cfg.deck_path, datum ? "datum_depth / initial.pressure" : "pressure", cause, x[std::size_t(worst) * bs] / units::bar,
      i + 1, j + 1, k + 1, grid.layer_depth(k), grid.layer_depth(0), grid.layer_depth(grid.nz() - 1),
      datum ? "hydrostatic" : "uniform", datum ? ": check initial.datum_depth against grid.top and the layer thicknesses" : ""));
}

namespace {

// The device-to-device copy bandwidth (bytes read + written per second, GB/s) of a 256 MiB copy,
// the mean of 5 after one untimed, timed on the stream: what a linear iteration's bytes are set
// against in the run log. 0 on the CPU, and when the device has no room for the two buffers.
double measure_copy_gbs(const ExecPtr& exec)
{
  if (!exec->is_cuda()) return 0.0;
  constexpr size64_t n = size64_t(32) << 20;  // doubles: 256 MiB
  try {
    Array<double> a(exec, n), b(exec, n);
    exec->copy(b.data(), a.data(), n * sizeof(double));
    PhaseTimer timer(*exec);
    constexpr int reps = 5;
    for (int k = 0; k < reps; ++k) {
      timer.begin(PhaseTimer::spmv);
      exec->copy(b.data(), a.data(), n * sizeof(double));
      timer.end(PhaseTimer::spmv);
    }
    std::array<double, PhaseTimer::num_phases> sec{};
    timer.collect(sec);
    return sec[PhaseTimer::spmv] > 0.0 ? 2.0 * 8.0 * double(n) * reps / sec[PhaseTimer::spmv] / 1e9 : 0.0;
  } catch (const std::exception&) {
    return 0.0;  // no room: the fraction is not reported
  }
}

}  // namespace

RunOutcome run_simulation(const RunConfig& cfg, ExecPtr exec, const RunOptions& options,
                          const std::function<void(const std::string&)>& log)
{
  const auto& output_dir = options.output_dir;
  const auto& command_line = options.command_line;
  const bool verbose = options.verbose;
  const auto t_start = Clock::now();
  RunOutcome out;
  RunStatistics& stats = out.stats;
  // The ranks of the run (issue 33): rank 0 writes every file; all ranks take every step together.
  const dist::CommPtr comm = options.comm ? options.comm : dist::serial_communicator();
  const bool root = comm->rank() == 0;
  exec->reset_device_memory_peak();  // this run's peak, whatever the executor served before
  const double memory_at_start = exec->device_memory_in_use_bytes();  // CUDA context, executor workspaces

  // ---- the output name: ours for the run; temporaries of a writer that is gone are removed
  std::optional<OutputLock> lock;
  if (root) lock.emplace(output_dir, cfg.output.name);
  if (lock)
    for (const auto& p : lock->removed()) log(fmt::format("removed stale temporary '{}' of an earlier run", p.string()));
  if (comm->size() > 1 && !options.jacobian_path.empty())
    throw std::invalid_argument("--jacobian: not available on several ranks (each holds only its rows)");
  const std::filesystem::path checkpoint_path = output_dir / (cfg.output.name + ".checkpoint.h5");

  // ---- setup: grid, model, initial state
  std::optional<AllocationLabel> label(std::in_place, "the grid");
  // Issue 30 item 3: the start-up, split into laps for the run log (what grows with the grid shows).
  double before = 0.0;  // seconds of start-up before this function (the deck, the backend)
  for (const auto& l : options.startup_before) before += l.second;
  StartupLaps startup(options.startup_before, t_start);
  const physics::Grid grid(cfg.grid, cfg.rock);
  startup.lap("grid (cells, faces, transmissibilities)");
  const physics::ModelEntry& entry = physics::model_entry(cfg.model);
  if (!cfg.model_input) throw std::invalid_argument(fmt::format("model '{}': no model input (load_deck)", cfg.model));
  // This rank's cells and ghost cells (the whole grid on one rank).
  const physics::Subdomain sub(comm, grid, options.partition,
                               physics::well_cells(grid, cfg.model_input->well_geometries()));
  if (sub.distributed()) startup.lap("decomposition (partition, ghost cells, halo plan)");
  label.emplace("the model (static data, wells, Jacobian pattern)");
  const std::unique_ptr<physics::Model> model_ptr =
      entry.create(exec, sub.grid(), cfg.rock, cfg.grid.gravity, *cfg.model_input);
  physics::Model& model = *model_ptr;
  startup.lap("model (mesh, wells, Jacobian pattern, device arrays)");
  const int bs = model.block_size();
  {
    const auto names = model.unknown_names();
    const std::size_t shown = std::min<std::size_t>(names.size(), 6);
    log(fmt::format("model {}: {} unknowns per cell ({}{})", model.type(), bs,
                    fmt::join(names.begin(), names.begin() + std::ptrdiff_t(shown), ", "), shown < names.size() ? ", ..." : ""));
  }
  {
    // The whole Jacobian: distributed, each rank's owned rows counted once.
    const BsrPattern& pat = model.pattern();
    const long long nnzb = comm->sum(static_cast<long long>(pat.row_ptr[std::size_t(sub.owned())]));
    log(fmt::format("grid {}x{}x{}: {} active cells, {} connections; Jacobian {} block rows, {} blocks of {}x{}",
                    grid.nx(), grid.ny(), grid.nz(), grid.num_active(), grid.faces().size(), grid.num_active(), nnzb,
                    bs, bs));
  }
  if (sub.distributed()) {
    const std::string d = sub.describe(bs);  // collective
    log(d);
    // How vectors in device memory cross between ranks (collective: the first call creates the NCCL communicator).
    if (exec->is_cuda()) {
      const bool nccl = dist::DeviceComm::of(comm) != nullptr;
      log(nccl ? std::string("halo: device to device through NCCL (one GPU per rank)")
               : fmt::format("halo: through pinned host memory and MPI ({})", dist::DeviceComm::why_not(*comm)));
      startup.lap("device communicator (NCCL)");
    }
  }
  for (const auto& note : cfg.notes) log(note);
  for (const auto& note : cfg.model_input->notes) log(note);
  for (const auto& w : model.wells())
    log(fmt::format("well {}: {} under {} control, {} completion(s), column ({}, {})", w.name,
                    w.injector ? "injector" : "producer", w.rate_control ? "rate" : "BHP", w.completions.size(),
                    w.i + 1, w.j + 1));

  // A restart takes its state, time and time-loop control from a report row of an earlier result.
  label.emplace("the restart state");
  std::optional<RestartPoint> restart;
  if (!options.restart_file.empty()) {
    restart = read_restart_point(options.restart_file, options.restart_report, cfg, grid, model);
    log(fmt::format("restart from report {} of {} (t = {:.6g} d, {} steps so far; next dt {:.4g} d)", restart->report,
                    options.restart_file.string(), restart->time / units::day, restart->record.totals.steps,
                    restart->record.dt_next / units::day));
  }
  label.emplace("the initial state");
  const auto x_init = restart ? sub.local_part(restart->state, bs) : model.initial_state();
  if (!restart) check_initial_pressure(cfg, sub.grid(), bs, x_init);
  Vector x(exec, std::span<const double>(x_init));
  Vector x0(exec, x.size());
  copy(x, x0);
  // Quantities in place at t = 0: of the original run's initial state when restarting.
  const auto in_place0 = restart ? model.in_place(Vector(exec, std::span<const double>(sub.local_part(restart->initial, bs))))
                                 : model.in_place(x);

  startup.lap("initial state");
  label.emplace("the result file");
  // The compressed static fields go to the background writer as its first job, so that the time
  // loop does not wait for them (a restart copies the history first, in this thread: written here).
  const bool defer_static = cfg.output.background_writer && !restart;
  // Rank 0 alone writes (the whole grid's fields, gathered); the other ranks have no writer.
  std::optional<ResultsWriter> writer;
  if (root) {
    Provenance prov{std::string(to_string(exec->backend())), exec->device_name(), command_line,
                    current_thread_policy().threads, current_thread_policy().text(),
                    exec->is_cuda() ? exec->tuning().source : "none (CPU backend: the reference SpMV)"};
    prov.ranks = comm->size();
    const auto& P = sub.partition().procs;
    if (comm->size() > 1) prov.partition = fmt::format("cartesian {}x{}x{}", P[0], P[1], P[2]);
    writer.emplace(output_dir / (cfg.output.name + ".h5"), cfg, prov, grid, model, in_place0,
                   defer_static ? StaticFields::later : StaticFields::now);
  }
  // The VTK series follows the HDF5 file report by report and is committed right after it.
  std::optional<VtkSeriesWriter> vtk;
  if (cfg.output.vtk && root) vtk.emplace(output_dir, cfg.output.name, grid, cfg.rock, model);
  // Every output call below goes through `bg` (declared after writer and vtk: it finishes their jobs
  // before they are destroyed), in order, on its thread when output.background_writer is on; the
  // main thread touches the files itself only when bg is idle (history copy before the loop,
  // after drain() at the end).
  // Its OpenMP regions (the compression of report fields): one thread on the CPU backend, whose
  // time loop keeps every CPU busy (threads.hpp: two teams slow both); the run's threads on CUDA.
  const int writer_threads = exec->is_cuda() ? current_thread_policy().threads : 1;
  BackgroundWriter bg(cfg.output.background_writer && root, 2,
                      [writer_threads] { set_thread_count_here(writer_threads); });
  // An output job: rank 0's writer only.
  const auto submit = [&bg, root](std::function<void()> job, bool heavy) {
    if (root) bg.submit(std::move(job), heavy);
  };
  if (defer_static) submit([&writer] { writer->write_static(); }, true);
  double output_seconds = 0.0;  // the loop's own time on output (copies, queueing, waits), for the time line
  bool checkpointed = false;    // a checkpoint of this run exists
  std::size_t report_rows = 0;  // rows of /reports written (history included)
  double last_report_time = 0.0;

  startup.lap(defer_static ? "result file (its static fields in the background)" : "result file (static fields)");
  label.emplace("the Newton solver (Jacobian, vectors, preconditioner)");
  NewtonSolver newton(cfg, exec, model, sub, stats, verbose ? log : NewtonSolver::Log{});
  label.reset();
  const auto& sc = cfg.schedule;
  const auto& nc = cfg.newton;
  double t = 0.0, dt = std::min(sc.dt_initial, sc.dt_max);
  std::size_t next_report = 0;
  int step_cuts = 0;
  // Cuts since the last step that needed (and survived) a Newton iteration. Steps short enough to
  // start converged pass without one, so a solver that fails every linear solve (e.g. CG on the
  // nonsymmetric Jacobian) would otherwise alternate cut / zero-iteration step / growth forever
  // without ever reaching dt_min: a livelock that advances t by nothing.
  int cuts_without_progress = 0;
  constexpr int max_cuts_without_progress = 20;
  double eta_lo = std::numeric_limits<double>::infinity(), eta_hi = 0.0;  // forcing terms used
  int newton_rows = 0;        // rows of /newton (history included)
  RunStatistics base;         // the history's totals (restart), to which this run's times add
  const KrylovProfile& prof = newton.linear_profile();
  const auto totals_now = [&] {
    RunStatistics s = stats;
    s.wall_seconds = base.wall_seconds + before + seconds_since(t_start);
    s.spmv_seconds = base.spmv_seconds + prof.spmv_seconds;
    s.precond_apply_seconds = base.precond_apply_seconds + prof.precond_seconds;
    s.orthogonalization_seconds = base.orthogonalization_seconds + prof.orthogonalization_seconds;
    // The rest of the host-measured solve time (it includes the final synchronisation); never
    // negative, so the four parts add up to linear_solve_seconds.
    s.linear_other_seconds = std::max(0.0, s.linear_solve_seconds - s.spmv_seconds - s.precond_apply_seconds -
                                               s.orthogonalization_seconds);
    s.linear_method = std::string(to_string(cfg.linear.krylov.method));
    s.preconditioner = newton.preconditioner_name();
    s.forcing = std::string(to_string(cfg.linear.forcing.kind));
    s.bsrmv_configs = exec->is_cuda() ? describe_bsrmv_plans(exec->bsrmv_plans(), exec->tuning())
                                      : "none (CPU backend: the reference SpMV)";
    return s;
  };
  const auto write_checkpoint = [&] {
    if (!cfg.output.checkpoint) return;
    submit([&writer, &checkpoint_path, totals = totals_now()] { writer->write_checkpoint(checkpoint_path, totals); },
           false);
    checkpointed = true;
  };
  bool replay_queued = false;  // the first preconditioner setup goes to the file once
  // A report row: fields, state and what the time loop needs to continue from it; queued with its
  // own copy of the state (a heavy job: at most two wait at once).
  const auto write_report = [&](double time, std::vector<double> state) {
    const auto t0 = Clock::now();
    RestartRecord rr;
    rr.time = time;
    rr.dt_next = dt;
    rr.totals = totals_now();
    rr.newton_rows = newton_rows;
    rr.cuts_without_progress = cuts_without_progress;
    std::optional<SetupReplay> replay;
    if (newton.first_setup() && !replay_queued) {
      replay = *newton.first_setup(), replay_queued = true;
      output_seconds += newton.replay_copy_seconds();  // the copy was made for this row (restart data)
    }
    submit(
        [&writer, &vtk, time, state = std::move(state), rr, replay = std::move(replay)] {
          writer->write_report(time, state);
          writer->write_restart(rr);
          if (replay) writer->write_setup_replay(*replay);
          if (vtk) vtk->write_report(time, state);
        },
        true);
    ++report_rows;
    last_report_time = time;
    if (report_rows > 1) write_checkpoint();  // row 0 of a fresh run is no point to restart from
    output_seconds += seconds_since(t0);
  };

  if (restart) {
    const auto t0 = Clock::now();
    const RestartPoint& rp = *restart;
    if (writer) {
      writer->set_restart_source(rp.file.string(), rp.report, rp.time);
      writer->copy_history(rp.file, rp.report, std::size_t(rp.record.totals.steps),
                           std::size_t(rp.record.newton_rows), rp.replay_setup);
    }
    if (vtk) {  // the whole series, history included, from the history's states
      const h5::File src = h5::File::open_read(rp.file);
      for (std::size_t r = 0; r <= rp.report; ++r)
        vtk->write_report(rp.history_times[r], h5::read_row(src.id(), "restart/state", r));
    }
    t = rp.time;
    dt = std::min(rp.record.dt_next, sc.dt_max);
    next_report = rp.report;  // row k is report_times[k - 1]: the next is report_times[rp.report]
    stats = base = rp.record.totals;
    newton_rows = rp.record.newton_rows;
    cuts_without_progress = rp.record.cuts_without_progress;
    report_rows = rp.report + 1;
    last_report_time = rp.time;
    if (rp.setup) {
      newton.replay_setup(*rp.setup);
      log(fmt::format("preconditioner: first setup of the run repeated (step {}), as the uninterrupted run has it",
                      rp.setup->step));
    }
    output_seconds += seconds_since(t0);
    write_checkpoint();
  } else {
    write_report(0.0, sub.gather(x, bs));
  }
  startup.lap("Newton solver and the first report");  // less the loop's output time, taken off below
  const double copy_gbs = measure_copy_gbs(exec);  // for the linear iterations' fraction of it
  startup.lap("copy-bandwidth measurement");
  // Deck, backend, grid, model, initial state, files.
  const double startup_seconds = before + seconds_since(t_start) - output_seconds;
  std::string startup_parts = "start-up parts:";
  const auto& startup_laps = startup.laps();
  for (std::size_t k = 0; k < startup_laps.size(); ++k) {
    double sec = startup_laps[k].second;
    if (startup_laps[k].first.starts_with("Newton solver")) sec = std::max(0.0, sec - output_seconds);
    startup_parts += fmt::format("{} {} {:.2f} s", k ? "," : "", startup_laps[k].first, sec);
  }
  startup_parts += fmt::format("; {:.2f} us per active cell",
                               grid.num_active() > 0 ? 1e6 * startup_seconds / double(grid.num_active()) : 0.0);

  // The one line an interrupted run leaves: where to restart from, if anywhere. What was queued is
  // written first, so the checkpoint named is complete.
  const auto interrupted = [&](int sig) {
    std::string where;
    std::string failed;
    try {
      bg.drain();
    } catch (const std::exception& e) {
      failed = e.what();
    }
    if (!failed.empty())
      where = fmt::format("writing the output failed ({}); {}", failed,
                          checkpointed ? fmt::format("an earlier checkpoint may remain at {}", checkpoint_path.string())
                                       : std::string("nothing to restart from"));
    else if (checkpointed)
      where = fmt::format("restart from report {} (t = {:.6g} d): rerun the same command with --restart {}",
                          report_rows - 1, last_report_time / units::day, checkpoint_path.string());
    else if (restart)
      where = fmt::format("nothing new was saved (output.checkpoint is off); restart again from report {} of {}",
                          restart->report, restart->file.string());
    else
      where = cfg.output.checkpoint ? "nothing to restart from (no report reached yet)"
                                    : "nothing to restart from (output.checkpoint is off)";
    return Interrupted(sig, fmt::format("interrupted by {} at t = {:.6g} d: {}", signal_name(sig), t / units::day, where));
  };

  const AllocationLabel loop_label("the time loop (preconditioner setups, Krylov workspace, result rows)");
  // Progress of the step lines: the simulated time this run started from and when its loop began.
  const double t_end = sc.report_times.empty() ? 0.0 : sc.report_times.back();
  const double t_loop_start = t;
  const auto wall_loop_start = Clock::now();
  while (next_report < sc.report_times.size()) {
    if (const int sig = run_signal(*comm)) throw interrupted(sig);
    const double t_report = sc.report_times[next_report];
    // Never leave a sliver before a report time: stretch the step if the remainder is tiny.
    double dt_try = std::min(dt, t_report - t);
    const bool hits_report = dt_try >= t_report - t || (t_report - t - dt_try) < 1e-3 * dt_try;
    if (hits_report) dt_try = t_report - t;

    model.begin_step(x0);
    const NewtonResult nr = newton.solve(x, x0, dt_try, stats.steps + 1);
    if (nr.interrupted) throw interrupted(run_signal(*comm));  // the step is abandoned: back to the last report
    stats.newton_iterations += nr.iterations;
    stats.linear_iterations += nr.linear_iterations;
    for (NewtonRecord rec : nr.records) {
      rec.step = stats.steps + 1, rec.attempt = step_cuts;
      submit([&writer, rec] { writer->write_newton(rec); }, false);
      ++newton_rows;
      eta_lo = std::min(eta_lo, rec.forcing), eta_hi = std::max(eta_hi, rec.forcing);
    }
    for (WellSwitchRecord rec : nr.switches) {
      rec.step = stats.steps + 1, rec.attempt = step_cuts, rec.time = hits_report ? t_report : t + dt_try;
      log(describe_well_switch(model, rec));
      submit([&writer, rec] { writer->write_well_switch(rec); }, false);
    }
    if (!nr.converged) {
      copy(x0, x);
      ++stats.cuts;
      ++step_cuts;
      const double dt_new = dt_try * nc.cut_factor;
      log(fmt::format("  cut: t = {:.6g} d, dt = {:.4g} d -> {:.4g} d: {}", t / units::day, dt_try / units::day,
                      dt_new / units::day, nr.failure));
      // What to use instead, said once in the final message (issue 28 item 10): the setup's own hint,
      // or, when the linear solver has failed since t = 0, the preconditioners that handle hard
      // first steps (a component absent at t = 0).
      const auto hint = [&]() -> std::string {
        if (!nr.hint.empty()) return "; " + nr.hint;
        if (!nr.linear_failed || stats.steps > 0) return "";
        return fmt::format("; no time step has succeeded: the linear solver ({} with {}) fails from t = 0; [solver.linear] "
                           "method = \"fgmres\" with [solver.linear.preconditioner] type = \"cpr\", or type = \"ilu0\" "
                           "with factor_view = \"block\" (block ILU(0)), handle hard first steps such as a component "
                           "absent at t = 0",
                           to_string(cfg.linear.krylov.method), newton.preconditioner_name());
      };
      if (dt_new < sc.dt_min)
        throw SimulationError(fmt::format("time step cut below dt_min = {:.3g} d (schedule.dt_min) at t = {:.6g} d "
                                          "after {} cut(s) in a row (last dt tried {:.4g} d); what limited it: {}",
                                          sc.dt_min / units::day, t / units::day, step_cuts, dt_try / units::day,
                                          nr.failure) + hint());
      if (++cuts_without_progress > max_cuts_without_progress)
        throw SimulationError(fmt::format("no progress at t = {:.6g} d: {} time-step cuts without a step that needed a "
                                          "Newton iteration; last failure: {}",
                                          t / units::day, max_cuts_without_progress + 1, nr.failure) + hint());
      dt = dt_new;
      continue;
    }

    if (nr.iterations > 0) cuts_without_progress = 0;
    t = hits_report ? t_report : t + dt_try;
    copy(x, x0);
    model.accept_step();  // its well controls start the next step
    ++stats.steps;
    StepRecord rec;
    rec.time = t;
    rec.dt = dt_try;
    rec.newton_iterations = nr.iterations;
    rec.linear_iterations = nr.linear_iterations;
    rec.cuts = step_cuts;
    rec.norms = nr.norms;
    rec.in_place = model.in_place(x);
    rec.wells = model.well_results();
    log(fmt::format("step {:5d}  {}  dt {:9.4f} d  newton {:2d}  linear {:4d}  CNV {:.2e}  MB {:.2e}{}", stats.steps,
                    describe_progress(t, t_end, t_loop_start, seconds_since(wall_loop_start)), dt_try / units::day,
                    nr.iterations, nr.linear_iterations,
                    nr.norms.max_cnv(), nr.norms.max_mb(), model.well_summary(rec.wells)));
    submit([&writer, rec = std::move(rec)] { writer->write_step(rec); }, false);
    step_cuts = 0;

    // Grow after a success unless the step was shortened to hit a report time.
    if (!(hits_report && dt_try < dt)) dt = std::min(sc.dt_max, dt_try * time_step_growth(nc, nr.iterations));
    if (hits_report) {
      write_report(t, sub.gather(x, bs));
      ++next_report;
    }
  }

  {
    const auto t0 = Clock::now();
    bg.drain();  // every row in the file before it is closed (and before the Jacobian's own HDF5 file)
    output_seconds += seconds_since(t0);
  }
  // Totals over the whole history: a restarted run adds its times to those of the run it continues.
  stats = totals_now();
  stats.copy_gb_per_s = copy_gbs;
  stats.linear_bytes_per_iteration =
      prof.iterations > 0 && prof.precond_unstated == 0 ? prof.bytes / double(prof.iterations) : 0.0;
  std::string parts;  // "weights 0.10 s, pressure stage setup 1.20 s, ..." for preconditioners made of parts
  for (const auto& e : newton.preconditioner_profile())
    parts += fmt::format("{}{} {:.2f} s", parts.empty() ? "" : ", ", e.part, e.seconds);
  if (!options.jacobian_path.empty()) {
    write_jacobian(options.jacobian_path, newton.jacobian());
    log(fmt::format("Jacobian of the last Newton iteration written to {}", options.jacobian_path.string()));
  }
  if (writer) {
    writer->commit(stats);
    out.result_file = writer->final_path();
  }
  if (vtk) {
    vtk->commit();
    log(fmt::format("VTK time series written to {}", vtk->pvd_path().string()));
  }
  // The final file holds every report's restart data: the checkpoint (this run's, or the one this
  // run continued from under the same name) is superseded.
  {
    std::error_code ec;
    const bool own = root && (cfg.output.checkpoint ||
                              (restart && std::filesystem::equivalent(restart->file, checkpoint_path, ec)));
    if (own && std::filesystem::remove(checkpoint_path, ec))
      log(fmt::format("checkpoint {} removed (the result file holds the restart data of every report)",
                      checkpoint_path.string()));
  }
  const double per_newton =
      stats.newton_iterations ? double(stats.linear_iterations) / stats.newton_iterations : 0.0;
  log(fmt::format("done: {} steps, {} cuts, {} Newton iterations, {} linear iterations ({:.1f} per Newton)",
                  stats.steps, stats.cuts, stats.newton_iterations, stats.linear_iterations, per_newton));
  std::string etas;  // the relative tolerances actually used (none when no linear solve ran)
  if (eta_hi > 0.0)
    etas = cfg.linear.forcing.kind == ForcingKind::fixed ? fmt::format(" {:.1e}", eta_hi)
                                                         : fmt::format(" {:.1e} to {:.1e}", eta_lo, eta_hi);
  log(fmt::format("linear: {} with {}, {} forcing{}: {:.1f} iterations per Newton iteration on average, {} at most",
                  stats.linear_method, stats.preconditioner, stats.forcing, etas, per_newton,
                  stats.max_linear_iterations));
  // Preconditioner applications per iteration differ by method (BiCGSTAB 2, IDR(s) (s+1)/s, GMRES 1):
  // the count that compares preconditioners across methods. This run's solves only (a restart's
  // history does not keep it).
  if (prof.solves > 0)
    log(fmt::format("linear: {} preconditioner applications in {} solves ({:.2f} per Newton iteration)",
                    prof.precond_count, prof.solves, double(prof.precond_count) / prof.solves));
  // A restart's totals include the run it continues: say how much of the wall time is whose.
  std::string whose;
  if (restart)
    whose = fmt::format(" (this run {:.2f} s + the original run(s) {:.2f} s up to report {} of {}; the parts below "
                        "are totals of both)",
                        stats.wall_seconds - base.wall_seconds, base.wall_seconds, restart->report,
                        restart->file.string());
  log(fmt::format("time: {:.2f} s total{}; assembly {:.2f} s, preconditioner setup {:.2f} s, linear solve {:.2f} s "
                  "(SpMV {:.2f} s, preconditioner apply {:.2f} s, orthogonalisation {:.2f} s, other {:.2f} s); "
                  "start-up {:.2f} s, reports {:.2f} s ({})",
                  stats.wall_seconds, whose, stats.assembly_seconds, stats.linear_setup_seconds, stats.linear_solve_seconds,
                  stats.spmv_seconds, stats.precond_apply_seconds, stats.orthogonalization_seconds,
                  stats.linear_other_seconds, startup_seconds, output_seconds,
                  bg.enabled() ? fmt::format("in the background: writing {:.2f} s, of which the loop waited {:.2f} s",
                                             bg.busy_seconds(), bg.wait_seconds())
                               : std::string("written in the loop: output.background_writer = false")));
  if (exec->is_cuda()) {  // collective: every rank reaches the end of the run
    // What a run of this size needs a GPU: the most device memory in use, and that less what was in use before the
    // run (the CUDA context, the executor's workspaces) per owned cell; the largest rank's of each.
    double m[3] = {exec->device_memory_peak_bytes(), memory_at_start, 0.0};
    m[2] = std::max(0.0, m[0] - m[1]) / double(std::max<index_t>(1, sub.owned()));
    comm->max(std::span<double>(m, 3));
    log(fmt::format("device memory: at most {:.2f} GB in use on {}, {:.2f} GB of it before the run; {:.0f} bytes per "
                    "owned cell{}",
                    m[0] / 1e9, comm->size() > 1 ? "a rank's GPU" : "the GPU", m[1] / 1e9, m[2],
                    comm->size() > 1 ? " (the largest rank's)" : ""));
    // Where it went (this rank's: rank 0's in the log), per owned cell: what a larger run needs of each part.
    const double cells = double(std::max<index_t>(1, sub.owned())), peak = exec->device_memory_peak_bytes();
    std::string parts;
    double ours = 0.0;
    for (const auto& [what, bytes] : exec->device_memory_at_peak()) {
      parts += fmt::format("{}{} {:.0f}", parts.empty() ? "" : ", ", what.empty() ? "unlabelled" : what, bytes / cells);
      ours += bytes;
    }
    log(fmt::format("device memory at the peak{}, bytes per owned cell: {}; the CUDA context and the libraries' own "
                    "buffers {:.0f}",
                    comm->size() > 1 ? " on rank 0's GPU" : "", parts, std::max(0.0, peak - ours) / cells));
  }
  if (!parts.empty()) log(fmt::format("preconditioner parts: {}", parts));
  if (const std::string built = newton.preconditioner_summary(); !built.empty())
    log(fmt::format("preconditioner built: {}", built));
  if (!restart) log(startup_parts);
  // This run's linear iterations against the bytes they moved at least, at the copy bandwidth.
  if (prof.iterations > 0) {
    const double per_it = (stats.linear_solve_seconds - base.linear_solve_seconds) / double(prof.iterations);
    const double bytes = prof.bytes / double(prof.iterations);
    if (prof.precond_unstated > 0) {
      log(fmt::format("linear iteration: {:.0f} us on average; its bytes are not counted: {} does not state what "
                      "an application moves", per_it * 1e6, stats.preconditioner));
    } else if (copy_gbs <= 0.0) {
      log(fmt::format("linear iteration: {:.0f} us on average, moving at least {:.1f} MB (products with A, Krylov "
                      "vectors, preconditioner applications)",
                      per_it * 1e6, bytes / 1e6));
    } else {
      const double ideal = bytes / (copy_gbs * 1e9);
      log(fmt::format("linear iteration: {:.0f} us on average, moving at least {:.1f} MB (products with A, Krylov "
                      "vectors, preconditioner applications): {:.1f} us at the copy bandwidth of {:.0f} GB/s measured "
                      "at start-up, {:.1f}% of it",
                      per_it * 1e6, bytes / 1e6, ideal * 1e6, copy_gbs, 100.0 * ideal / per_it));
    }
  }
  if (!exec->is_cuda())
    if (const std::string load = load_summary(); !load.empty()) log(fmt::format("threads: {}", load));
  return out;
}

}  // namespace blockres
