// --threads, the one option every subcommand shares (miniapp/run/subcommand.hpp).
#include "miniapp/run/subcommand.hpp"

#include <CLI/CLI.hpp>

namespace blockres {

void add_threads_option(CLI::App& command, CommandContext& context)
{
  command
      .add_option("--threads", context.threads,
                  "CPU threads (OpenMP); default: the CPUs this process may use (affinity mask, cgroup quota) or "
                  "OMP_NUM_THREADS; capped at the machine's CPUs")
      ->check(CLI::Range(1, 4096));
}

}  // namespace blockres
