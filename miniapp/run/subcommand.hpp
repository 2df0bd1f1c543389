// What main hands each subcommand (run, verify, bench) when it registers its CLI11 command line, and
// what it gets back: the parsed command's action. Every subcommand folder registers itself.
#pragma once

#include <functional>
#include <string>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included only where options are added
}

namespace blockres {

// Shared by every subcommand; main owns it and keeps it alive until the action returns.
struct CommandContext {
  std::string command_line;                       // argv as typed, recorded in result files and reports
  std::function<void(const std::string&)> log;    // one line to stdout, flushed
  std::function<void(const std::string&)> error;  // one "error: ..." line to stderr; the exit code is the caller's
  int threads = 0;  // --threads of whichever subcommand ran: 0 = the affinity mask and cgroup quota
};

// A registered subcommand. After a successful parse, main applies the allocation limit and the
// thread policy (context.threads), then calls `run` of the one whose `app` was parsed.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;  // the process exit code; throws for main to turn into one line
  // Exit code of a bad command line: 1, except verify (2: its convention is 0 pass, 1 fail, 2 error).
  int usage_error_code = 1;
};

// --threads N, bound to context.threads: every subcommand (and every bench section) takes it.
void add_threads_option(CLI::App& command, CommandContext& context);

}  // namespace blockres
