// `blockres run`: its options and its action (deck -> backend -> simulation -> result file).
#include "miniapp/run/run_cli.hpp"

#include "input/quote.hpp"
#include "linalg/allocation.hpp"
#include "linalg/distributed/communicator.hpp"
#include "miniapp/io/deck.hpp"
#include "miniapp/io/destination.hpp"
#include "miniapp/io/version.hpp"
#include "miniapp/run/backend.hpp"
#include "miniapp/run/run_control.hpp"
#include "miniapp/run/simulator.hpp"
#include "miniapp/run/threads.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace blockres {

namespace {

struct RunCommandLine {
  std::string deck;
  std::string backend = "auto";
  std::string output_dir;              // empty: the deck's output.directory
  std::vector<std::string> overrides;  // --set dotted.key=value
  bool verbose = false;
  std::string jacobian_path;           // --write-jacobian
  std::string restart_file;
  long restart_report = -1;            // < 0: the file's last report
  std::string tuning_cache;            // --tuning-cache: "" the default cache, "none", or a file
  std::string partition;               // --partition PxxPyxPz (0: the partitioner's choice)
};

int run_deck(const RunCommandLine& o, const CommandContext& root_context)
{
  // Several ranks from an MPI launcher (issue 33): one distributed run; rank 0 logs and writes.
  const dist::CommPtr comm = dist::world_communicator();
  CommandContext context = root_context;
  if (comm->rank() != 0) context.log = [](const std::string&) {};
  const physics::PartitionSpec partition = physics::parse_partition_spec(o.partition, "--partition");
  // Ctrl-C / a batch system's SIGTERM: main installed the handlers first thing; the time loop stops
  // cleanly (miniapp/run/run_control.hpp), and a signal before it starts stops here.
  const auto stop_if_signalled = [] {
    if (const int sig = interrupt_signal())
      throw Interrupted(sig, fmt::format("interrupted by {} before the run started: nothing was written",
                                         signal_name(sig)));
  };
  // --output is applied as an override so the resolved deck in the result records it.
  std::vector<std::string> overrides = o.overrides;
  if (!o.output_dir.empty()) overrides.push_back("output.directory=" + quote_literal(o.output_dir));
  // The start-up before run_simulation, timed for the run log's start-up parts (and its wall time).
  StartupLaps startup;
  RunConfig cfg = [&] {
    const AllocationLabel label("the deck's grid and rock properties");
    return load_deck(o.deck, overrides);
  }();
  startup.lap("deck (with its rock property fields)");
  stop_if_signalled();
  // Every file the run will write, before it starts: a directory in the way must not cost the run.
  check_run_destinations(cfg, !o.restart_file.empty(), o.jacobian_path);
  if (const auto folder = std::filesystem::path(o.jacobian_path).parent_path(); !folder.empty())
    std::filesystem::create_directories(folder);  // the Jacobian is written at the end; its folder exists now
  context.log(fmt::format("blockres {} (git {}): deck {}", version_string(), git_commit(), o.deck));
  // What changed the deck, in the log as well as in the result's resolved deck.
  for (const std::string& set : o.overrides) context.log(fmt::format("override: --set {}", set));
  context.log(fmt::format("threads: {}", current_thread_policy().text()));
  auto exec = choose_backend(o.backend, context.log, o.verbose, o.tuning_cache);
  startup.lap("output checks and the backend");
  // What the backend's start-up was made of (CUDA: the context, the device query, the stream and
  // cuBLAS handle, the workspaces).
  if (exec->is_cuda()) {
    std::string parts;
    for (const auto& [what, sec] : exec->creation_parts())
      parts += fmt::format("{}{} {:.3f} s", parts.empty() ? "" : ", ", what, sec);
    context.log("backend start-up: " + parts);
  }
  RunOptions ro(cfg.output.directory, context.command_line, o.verbose, o.jacobian_path);
  ro.startup_before = startup.take();
  ro.restart_file = o.restart_file;
  ro.restart_report = o.restart_report;
  ro.comm = comm;
  ro.partition = partition;
  stop_if_signalled();
  const auto outcome = run_simulation(cfg, exec, ro, context.log);
  if (!outcome.result_file.empty()) context.log(fmt::format("results written to {}", outcome.result_file.string()));
  // A stop request that came while the final files were written: the run completed (exit 0).
  if (const int sig = interrupt_signal())
    context.log(fmt::format("{} received after the last report: the run completed", signal_name(sig)));
  return 0;
}

}  // namespace

Subcommand register_run(CLI::App& app, CommandContext& context)
{
  auto o = std::make_shared<RunCommandLine>();
  auto* run = app.add_subcommand("run", "run an input deck and write <output>/<name>.h5");
  // Checkpoints are a deck key, so --help says where they are and how a run continues from one.
  run->footer(
      "Checkpoints: with output.checkpoint = true in the deck's [output] (or --set output.checkpoint=true) the run\n"
      "writes <output>/NAME.checkpoint.h5 after every report; an interrupted run (Ctrl-C, SIGTERM of a batch\n"
      "system) then says which report it can continue from. Continue with the same command plus\n"
      "--restart <output>/NAME.checkpoint.h5, or from any report of a finished NAME.h5 with --restart NAME.h5\n"
      "--restart-report K. The checkpoint is removed once the final NAME.h5 is written.");
  add_threads_option(*run, context);
  run->add_option("deck", o->deck, "TOML input deck")->required();
  run->add_option("--backend", o->backend, "auto (CUDA when a device is present), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  run->add_option("--output", o->output_dir, "output directory (default: the deck's output.directory)");
  run->add_option("--set", o->overrides, "override a deck key: --set dotted.key=value (repeatable)")
      ->allow_extra_args(false);  // `--set k=v DECK`: DECK is the deck, not a second override
  run->add_flag("-v,--verbose", o->verbose, "log every Newton iteration (residual norms, linear iterations)");
  run->add_option("--write-jacobian", o->jacobian_path, "write the last assembled Jacobian to this HDF5 file");
  run->add_option("--tuning-cache", o->tuning_cache,
                  "CUDA kernel tuning to use: a file written by 'blockres tune', or 'none' for the built-in rule "
                  "(default: this GPU's cache under $BLOCKRES_TUNING_DIR or ~/.cache/blockres, when there is one)");
  auto* restart_opt = run->add_option("--restart", o->restart_file,
                                      "continue from a report of this result file (a NAME.h5, or the NAME.checkpoint.h5 that "
                                      "output.checkpoint = true writes)");
  run->add_option("--partition", o->partition,
                  "several ranks (mpirun -np N blockres run ...): the process grid PxxPyxPz, e.g. 1x1x2; 0 leaves an "
                  "axis to the partitioner (default: chosen, Pz = 1 preferred, balanced on active cells)");
  run->add_option("--restart-report", o->restart_report, "the report row to continue from (0 = t = 0; default: the last)")
      ->check(CLI::Range(0L, 1L << 40))
      ->needs(restart_opt);
  return {run, [o, &context] { return run_deck(*o, context); }};
}

}  // namespace blockres
