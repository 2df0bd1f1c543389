// blockres command line: run, bench, verify, tune, plot, --version, --help; every error -> one line, exit 1
// (verify: 2, its own convention: 0 pass, 1 fail, 2 error). Each subcommand registers its own
// command line (miniapp/run/run_cli.hpp, miniapp/bench/bench_cli.hpp, miniapp/verify/verify_cli.hpp).
#include "input/error.hpp"
#include "linalg/allocation.hpp"
#include "linalg/distributed/communicator.hpp"
#include "linalg/executor.hpp"
#include "miniapp/bench/bench_cli.hpp"
#include "miniapp/io/h5.hpp"
#include "miniapp/io/version.hpp"
#include "miniapp/plot/plot_cli.hpp"
#include "miniapp/run/backend.hpp"
#include "miniapp/run/restart.hpp"
#include "miniapp/run/run_cli.hpp"
#include "miniapp/run/run_control.hpp"
#include "miniapp/run/simulator.hpp"
#include "miniapp/run/threads.hpp"
#include "miniapp/tune/tune_cli.hpp"
#include "miniapp/verify/verify_cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace {

void log_line(const std::string& s)
{
  std::fputs(s.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void print_error(const std::string& msg)
{
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", msg.c_str());
}

// Set while a command runs on several ranks (bench scaling under mpirun): an error on one rank then ends every rank
// (MPI_Abort) instead of leaving the others waiting in a collective.
bool on_several_ranks = false;

[[noreturn]] void fail(const std::string& msg, int code = 1)
{
  print_error(msg);
  if (on_several_ranks) blockres::dist::world_communicator()->abort(code);
  std::exit(code);
}

// "run, bench or verify"
std::string names_of(const std::vector<blockres::Subcommand>& commands)
{
  std::string list;
  for (std::size_t i = 0; i < commands.size(); ++i)
    list += (i == 0 ? "" : i + 1 == commands.size() ? " or " : ", ") + commands[i].app->get_name();
  return list;
}

// Runs from the executable's ELF .preinit_array: after the dynamic loader has mapped and relocated
// the libraries (~10 ms) but before their initializers (CUDA, MPI, VTK, HDF5: ~0.2 s here), so a
// SIGTERM in a run's first fraction of a second is a clean stop, not a silent exit 143.
extern "C" void install_handlers_before_library_initializers(int, char**, char**)
{
  blockres::install_interrupt_handlers();
}
[[gnu::section(".preinit_array"), gnu::used]] void (*const preinit_interrupt_handlers)(int, char**, char**) =
    install_handlers_before_library_initializers;

}  // namespace

int main(int argc, char** argv)
{
  // Installed before main already (preinit_interrupt_handlers): a SIGTERM/SIGINT is recorded, never
  // the default silent death. Subcommands that do not poll for it get the default action back below.
  blockres::install_interrupt_handlers();
  blockres::CommandContext context;
  for (int i = 0; i < argc; ++i) context.command_line += (i ? " " : "") + std::string(argv[i]);
  context.log = log_line;
  context.error = print_error;

  CLI::App app{"blockres: a reservoir-style Newton-Krylov mini-application (block-sparse GPU solvers)", "blockres"};
  app.set_version_flag("--version", fmt::format("blockres {} (git {}, CUDA backend {})", blockres::version_string(),
                                                blockres::git_commit(),
                                                blockres::Executor::built_with_cuda() ? "built" : "not built"));
  app.require_subcommand(1);
  const std::vector<blockres::Subcommand> commands = {blockres::register_run(app, context),
                                                      blockres::register_bench(app, context),
                                                      blockres::register_verify(app, context),
                                                      blockres::register_tune(app, context),
                                                      blockres::register_plot(app, context)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 only says "a subcommand is required" for an unknown one; name it.
    const std::string first = argc > 1 ? argv[1] : "";
    const auto named = std::find_if(commands.begin(), commands.end(),
                                    [&](const blockres::Subcommand& c) { return c.app->get_name() == first; });
    if (!first.empty() && first[0] != '-' && named == commands.end())
      fail(fmt::format("unknown subcommand '{}' (expected: {}; see 'blockres --help')", first, names_of(commands)));
    // A subcommand with its own exit-code convention (verify) is named in the hint.
    const int code = named == commands.end() ? 1 : named->usage_error_code;
    fail(fmt::format("{} (see 'blockres {}--help')", e.what(), code != 1 ? first + " " : ""), code);
  }

  // Several ranks from an MPI launcher (issue 33): `run` and `verify` split the grid among them and `bench scaling`
  // measures the distributed product; any other command would run once per rank and race for one output, so it is
  // refused.
  // (Asked of the parsed command line, so options between `bench` and `scaling` do not hide it.)
  const CLI::App* bench = app.get_subcommand("bench");
  const bool many_ranks_command =
      app.get_subcommand("run")->parsed() || app.get_subcommand("verify")->parsed() ||
      (bench->parsed() && bench->get_subcommand("scaling")->parsed());
  const int launched_ranks = blockres::dist::launcher_ranks();
  on_several_ranks = launched_ranks > 1 && many_ranks_command;
  if (const int ranks = launched_ranks; ranks > 1 && !many_ranks_command)
    fail(fmt::format("started as {} ranks by an MPI launcher: only 'run', 'verify' and 'bench scaling' run on several "
                     "ranks; "
                     "run this command without mpirun/srun, or with one rank",
                     ranks));

  try {
    blockres::set_allocation_limit_from_environment();
    blockres::apply_thread_policy(context.threads);
    for (const blockres::Subcommand& c : commands)
      if (c.app->parsed()) {
        // Only `run` stops cleanly (its time loop polls interrupt_signal()).
        if (c.app->get_name() != "run") blockres::restore_default_interrupt_handlers();
        return c.run();
      }
  } catch (const blockres::Interrupted& e) {
    // One line (rank 0's, when every rank stopped together), then the conventional status of a process ended by
    // the signal (130, 143).
    std::fflush(stdout);
    if (!on_several_ranks || blockres::dist::world_communicator()->rank() == 0) std::fprintf(stderr, "blockres: %s\n", e.what());
    std::exit(128 + e.signal);
  } catch (const blockres::InputError& e) {
    fail(e.what());
  } catch (const blockres::RestartError& e) {
    fail(e.what());
  } catch (const blockres::OutputBusy& e) {
    fail(e.what());
  } catch (const std::bad_alloc&) {
    const auto& f = blockres::last_failed_host_allocation();
    const std::size_t limit = blockres::allocation_limit();
    fail(f.bytes ? fmt::format("out of host memory: {} failed{}", blockres::describe_allocation(f.label, f.bytes),
                               limit && f.bytes > limit
                                   ? fmt::format(" [forced: BLOCKRES_FAIL_ALLOC_ABOVE = {}]", limit)
                                   : std::string())
                 : std::string("out of host memory (std::bad_alloc; the request's size is unknown)"));
  } catch (const blockres::BackendError& e) {
    fail(e.what());
  } catch (const blockres::SimulationError& e) {
    fail(fmt::format("simulation failed: {}", e.what()));
  } catch (const blockres::h5::Error& e) {
    fail(fmt::format("HDF5: {}", e.what()));
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return 0;
}
