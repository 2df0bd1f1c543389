// `blockres bench model`: a deck's model on the device: assembly throughput against the copy
// bandwidth of the same run, and the first Newton iterations of its first time step with each
// preconditioner (time per Newton iteration split into assembly, preconditioner setup and linear
// solve; linear iterations; peak device memory).
//
// Assembly bytes (the model's byte model, Model-independent): Jacobian values and residual written
// (8 (nnzb bs^2 + n bs)) plus the state read (8 * 2 n bs: x and x0). Static data (transmissibilities,
// pore volumes, connectivity) and the per-cell property scratch a model may keep are not counted,
// so the fraction is a lower bound of the traffic the kernels really move.
#include "miniapp/bench/bench_common.hpp"
#include "miniapp/bench/preconditioner_presets.hpp"
#include "miniapp/io/deck.hpp"
#include "miniapp/io/tuning_cache.hpp"
#include "miniapp/io/version.hpp"
#include "miniapp/run/backend.hpp"
#include "physics/model_registry.hpp"
#include "physics/units.hpp"

#include <chrono>
#include <cmath>
#include <memory>

namespace blockres {

using namespace benchutil;

namespace {

using Clock = std::chrono::steady_clock;

double memory_in_use_bytes()
{
  std::size_t free = 0, total = 0;
  BLOCKRES_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return double(total - free);
}

struct IterationRow {
  double assembly_ms = nan_v, setup_ms = nan_v, solve_ms = nan_v;
  int linear_iterations = 0;
  double cnv = nan_v, mb = nan_v;  // before the iteration's solve
  std::string outcome;
};

struct PreconditionerRun {
  std::string key, name, error;
  std::string toml;  // the preconditioner's deck keys (bench::BenchPreconditioner::toml)
  std::vector<IterationRow> rows;
  bool newton_converged = false;
  double peak_memory_bytes = 0;
};

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

int run_model_bench(const ModelBenchOptions& o, const std::function<void(const std::string&)>& log)
{
  const RunConfig cfg = load_deck(o.deck, o.overrides);
  // Every label resolved before anything runs: "deck" the deck's own, the others the bench presets.
  std::vector<bench::BenchPreconditioner> choices;
  for (const auto& key : o.preconditioners)
    choices.push_back(key == "deck" ? bench::deck_preconditioner(cfg) : bench::preconditioner_preset(key));
  const ExecPtr e = create_tuned_cuda(0, o.tuning_cache, log);  // the device's tuning cache: one line
  log(fmt::format("bench model: {} ({}) on {}; deck {}", version_string(), provenance_text(), e->device_name(), o.deck));

  Timing copy_t;
  const double copy_gbs = copy_bandwidth_gbs(e, size64_t(1) << 30, o.warmup, o.reps, copy_t);
  log(fmt::format("device-to-device copy bandwidth: {:.0f} GB/s (read + write of 1 GiB, median of {})", copy_gbs, o.reps));

  const double memory_before = memory_in_use_bytes();
  const physics::Grid grid(cfg.grid, cfg.rock);
  const physics::ModelEntry& entry = physics::model_entry(cfg.model);
  const auto model = entry.create(e, grid, cfg.rock, cfg.grid.gravity, *cfg.model_input);
  const int bs = model->block_size();
  const index_t n = model->num_cells();
  const size64_t nnzb = model->pattern().nnzb();
  BsrMatrix J(e, bs, model->pattern());
  Vector R(e, J.scalar_rows()), dx(e, J.scalar_rows());
  const auto x_init = model->initial_state();
  Vector x(e, std::span<const double>(x_init)), x0(e, std::span<const double>(x_init));
  const double dt = cfg.schedule.dt_initial;
  log(fmt::format("model {}: {} cells, block size {}, {} blocks ({:.2f} GB of Jacobian values); dt = {} d",
                  model->type(), n, bs, nnzb, 8.0 * double(nnzb) * bs * bs / 1e9, dt / units::day));

  // ---- assembly throughput
  model->begin_step(x0);
  const Timing asm_t = time_on_stream(e->stream(), o.warmup, o.reps, [&] { model->assemble(x, x0, dt, R, J); });
  const double bytes = 8.0 * (double(nnzb) * bs * bs + double(n) * bs) + 8.0 * 2.0 * double(n) * bs;
  const double asm_gbs = bytes / (asm_t.median_ms * 1e-3) / 1e9;
  log(fmt::format("assembly: {:.3f} ms median (min {:.3f}, max {:.3f}) for {:.3f} GB: {:.0f} GB/s, {:.1f}% of copy",
                  asm_t.median_ms, asm_t.min_ms, asm_t.max_ms, bytes / 1e9, asm_gbs, 100.0 * asm_gbs / copy_gbs));
  const double memory_model = memory_in_use_bytes() - memory_before;

  // ---- verification: the same assembly on the CPU backend (the reference), when it fits
  bool verified = false;
  double max_err_j = nan_v, max_err_r = nan_v;
  const double jac_gb = 8.0 * double(nnzb) * bs * bs / 1e9;
  if (jac_gb <= o.verify_gb) {
    const ExecPtr c = Executor::create_cpu();
    const auto mc = entry.create(c, grid, cfg.rock, cfg.grid.gravity, *cfg.model_input);
    BsrMatrix Jc(c, bs, mc->pattern());
    Vector Rc(c, Jc.scalar_rows());
    Vector xc(c, std::span<const double>(x_init));
    mc->begin_step(xc);
    mc->assemble(xc, xc, dt, Rc, Jc);
    const auto jg = J.values().to_host(), jh = Jc.values().to_host();
    const auto rg = R.to_host(), rh = Rc.to_host();
    // Entry-wise error relative to the largest magnitude of the entry's block row (rows mix units).
    max_err_j = 0.0, max_err_r = 0.0;
    const auto& rp = model->pattern().row_ptr;
    for (index_t i = 0; i < n; ++i)
      for (int a = 0; a < bs; ++a) {
        double scale = 0.0;
        for (index_t b = rp[i]; b < rp[i + 1]; ++b)
          for (int v = 0; v < bs; ++v) scale = std::max(scale, std::abs(jh[(size64_t(b) * bs + a) * bs + v]));
        for (index_t b = rp[i]; b < rp[i + 1]; ++b)
          for (int v = 0; v < bs; ++v) {
            const size64_t q = (size64_t(b) * bs + a) * bs + v;
            const double d = std::abs(jg[q] - jh[q]) / (scale > 0 ? scale : 1.0);
            max_err_j = std::isnan(d) ? d : std::max(max_err_j, d);
          }
      }
    double rscale = 0.0;
    for (const double v : rh) rscale = std::max(rscale, std::abs(v));
    for (std::size_t q = 0; q < rh.size(); ++q)
      max_err_r = std::max(max_err_r, std::abs(rg[q] - rh[q]) / (rscale > 0 ? rscale : 1.0));
    verified = max_err_j <= 1e-10 && max_err_r <= 1e-10;
    log(fmt::format("assembly against the CPU reference: max error {:.2e} (Jacobian, relative to the block row), "
                    "{:.2e} (residual, relative to its max): {}",
                    max_err_j, max_err_r, verified ? "verified" : "FAILED"));
  } else {
    log(fmt::format("assembly not verified against the CPU: the Jacobian has {:.1f} GB (> --verify-gb {})", jac_gb,
                    o.verify_gb));
  }

  // ---- Newton iterations with each preconditioner
  std::vector<PreconditionerRun> runs;
  const physics::UpdateLimits limits{cfg.newton.max_dp_rel, cfg.newton.max_dsw, cfg.newton.max_dx};
  log("preconditioners (their [solver.linear.preconditioner] keys):");
  for (const auto& pc : choices) log(fmt::format("  {:<16} {}", pc.label, pc.toml));
  for (const auto& pc : choices) {
    const std::string& key = pc.label;
    PreconditionerRun run;
    run.key = key;
    run.toml = pc.toml;
    copy(x0, x);
    model->begin_step(x0);
    try {
      auto P = make_preconditioner(e, pc.spec);
      run.name = P->name();  // again after the setups: some resolve their choices there
      // The model's accumulation blocks for a preconditioner that needs them (true-IMPES CPR), refreshed
      // before every setup from the same state and dt as the Jacobian, as the time loop does.
      Vector accumulation;
      if (P->needs_accumulation_blocks()) {
        if (!model->has_accumulation_blocks())
          throw std::invalid_argument(fmt::format("{} needs accumulation derivatives; model {} does not provide them",
                                                  run.name, model->type()));
        accumulation = Vector(e, J.scalar_rows() * model->block_size());
        P->set_accumulation_blocks(accumulation);
      }
      KrylovSolver krylov(e, cfg.linear.krylov);
      KrylovConfig kc = cfg.linear.krylov;
      kc.rel_tol = o.rel_tol;
      krylov.set_config(kc);
      for (int it = 0; it < o.newton_iterations; ++it) {
        IterationRow row;
        e->synchronize();
        auto t0 = Clock::now();
        model->assemble(x, x0, dt, R, J);
        const physics::ConvergenceNorms norms = model->convergence(x, R, dt);
        row.assembly_ms = ms_since(t0);
        row.cnv = norms.max_cnv(), row.mb = norms.max_mb();
        if (!norms.finite) {
          row.outcome = "residual not finite";
          run.rows.push_back(row);
          break;
        }
        if (norms.max_cnv() <= cfg.newton.tol_cnv && norms.max_mb() <= cfg.newton.tol_mb) {
          run.newton_converged = true;
          row.outcome = "newton converged";
          run.rows.push_back(row);
          break;
        }
        t0 = Clock::now();
        if (P->needs_accumulation_blocks()) model->accumulation_blocks(x, dt, accumulation);
        const SetupStatus st = P->setup(J);
        e->synchronize();
        row.setup_ms = ms_since(t0);
        run.peak_memory_bytes = std::max(run.peak_memory_bytes, memory_in_use_bytes() - memory_before);
        if (!st.ok) {
          row.outcome = "setup failed: " + st.message;
          run.rows.push_back(row);
          break;
        }
        fill(dx, 0.0);
        t0 = Clock::now();
        const SolveStatus ls = krylov.solve(J, *P, R, dx);
        e->synchronize();
        row.solve_ms = ms_since(t0);
        run.peak_memory_bytes = std::max(run.peak_memory_bytes, memory_in_use_bytes() - memory_before);
        row.linear_iterations = ls.iterations;
        row.outcome = std::string(to_string(ls.reason));
        run.rows.push_back(row);
        if (!ls.converged) break;
        model->update(x, dx, limits);
      }
      run.name = P->name();
    } catch (const std::exception& ex) {
      run.error = ex.what();
    }
    // Log the run.
    if (!run.error.empty()) {
      log(fmt::format("  {:<16} error: {}", key, run.error));
    } else {
      log(fmt::format("  {:<16} {}  peak device memory {:.2f} GB ({:.0f} bytes/cell)", key, run.name,
                      run.peak_memory_bytes / 1e9, run.peak_memory_bytes / double(n)));
      for (std::size_t r = 0; r < run.rows.size(); ++r) {
        const auto& row = run.rows[r];
        log(fmt::format("    newton {}: CNV {:.2e} MB {:.2e}; assembly {} ms, setup {} ms, solve {} ms, {} linear "
                        "iterations ({})",
                        r, row.cnv, row.mb, ms(row.assembly_ms), ms(row.setup_ms), ms(row.solve_ms),
                        row.linear_iterations, row.outcome));
      }
    }
    runs.push_back(std::move(run));
  }

  // ---- report
  Json j;
  write_report_head(j, "model", o.json_path, e->device_name(), o.command_line);
  j["strict"] = o.strict;  // accepted like every section's; no target is evaluated here
  j["deck"] = o.deck;
  j["overrides"] = o.overrides;
  j["resolved_deck"] = cfg.resolved_toml;
  j["model"] = model->type();
  j["cells"] = n;
  j["block_size"] = bs;
  j["blocks"] = nnzb;
  j["dt_days"] = dt / units::day;
  j["copy_gbs"] = copy_gbs;
  j["copy"] = timing_json(copy_t);
  j["assembly"] = {{"time", timing_json(asm_t)},
                   {"bytes", bytes},
                   {"gbs", asm_gbs},
                   {"fraction_of_copy", asm_gbs / copy_gbs},
                   {"byte_model", "8 (nnzb bs^2 + n bs) written + 8 * 2 n bs read (x, x0)"},
                   {"model_device_memory_bytes", memory_model},
                   {"verified", verified},
                   {"max_error_jacobian", max_err_j},
                   {"max_error_residual", max_err_r}};
  Json& preconditioners = j["preconditioners"] = Json::array();
  for (const auto& run : runs) {
    Json iterations = Json::array();
    for (const auto& row : run.rows)
      iterations.push_back({{"assembly_ms", row.assembly_ms},
                            {"setup_ms", row.setup_ms},
                            {"solve_ms", row.solve_ms},
                            {"linear_iterations", row.linear_iterations},
                            {"cnv", row.cnv},
                            {"mb", row.mb},
                            {"outcome", row.outcome}});
    preconditioners.push_back({{"key", run.key},
                               {"preconditioner_toml", run.toml},
                               {"name", run.name},
                               {"error", run.error},
                               {"peak_device_memory_bytes", run.peak_memory_bytes},
                               {"newton_converged", run.newton_converged},
                               {"iterations", std::move(iterations)}});
  }
  write_tuning_json(j, *e);  // the SpMV configurations the solves used
  write_json_file(o.json_path, j);
  log(fmt::format("report written to {}", o.json_path));
  const bool checked = jac_gb > o.verify_gb || verified;
  return checked ? 0 : 1;
}

}  // namespace blockres
