// `blockres plot FILE...`: its options, checked here, and its action: run the script that draws the
// pictures (blockres_plot.py, matplotlib) with them. Everything about the files and the pictures is
// the script's; this side finds the script and the interpreter and passes the options on verbatim.
#include "miniapp/plot/plot_cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

extern char** environ;

namespace blockres {
namespace {

struct PlotOptions {
  std::vector<std::string> files;
  std::string output = "plots";
  std::string format = "png";
  std::vector<std::string> fields;
  std::vector<int> layers, steps;
};

constexpr const char* script_name = "blockres_plot.py";
constexpr const char* debian_packages = "python3 python3-matplotlib python3-numpy python3-h5py";

// $BLOCKRES_PLOT_SCRIPT (tests), else blockres_plot.py in the folder of this executable (the build copies
// it there, miniapp/plot/CMakeLists.txt).
std::filesystem::path plot_script()
{
  if (const char* s = std::getenv("BLOCKRES_PLOT_SCRIPT"); s && *s) return s;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error(fmt::format("blockres plot: cannot find this executable (/proc/self/exe: {})",
                                               ec.message()));
  return exe.parent_path() / script_name;
}

int run_plot(const PlotOptions& o, const CommandContext& context)
{
  const std::filesystem::path script = plot_script();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(script, ec)) {
    context.error(fmt::format("blockres plot: its script {} is missing{}; rebuild blockres (the build copies it "
                              "beside the executable) or set BLOCKRES_PLOT_SCRIPT",
                              script.string(), std::getenv("BLOCKRES_PLOT_SCRIPT") ? " (BLOCKRES_PLOT_SCRIPT)" : ""));
    return 1;
  }
  const char* python_env = std::getenv("BLOCKRES_PYTHON");
  const std::string python = python_env && *python_env ? python_env : "python3";

  // Options as NAME=VALUE (a value may start with '-'), then "--" and the files as given.
  std::vector<std::string> args = {python, script.string(), "--output=" + o.output, "--format=" + o.format};
  for (const auto& f : o.fields) args.push_back("--field=" + f);
  for (int k : o.layers) args.push_back(fmt::format("--layer={}", k));
  for (int s : o.steps) args.push_back(fmt::format("--step={}", s));
  args.push_back("--");
  args.insert(args.end(), o.files.begin(), o.files.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  // posix_spawnp searches PATH for a name without '/'; glibc reports a failed exec as its return value.
  const int rc = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ);
  if (rc != 0) {
    context.error(rc == ENOENT
                      ? fmt::format("blockres plot needs Python 3: '{}' was not found{}; install the Debian packages "
                                    "{} (sudo apt-get install {})",
                                    python, python_env && *python_env ? " (BLOCKRES_PYTHON)" : " on PATH",
                                    debian_packages, debian_packages)
                      : fmt::format("blockres plot: cannot run '{}': {}", python, std::strerror(rc)));
    return 1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      context.error(fmt::format("blockres plot: waiting for '{}': {}", python, std::strerror(errno)));
      return 1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    if (WTERMSIG(status) != SIGINT && WTERMSIG(status) != SIGTERM)
      context.error(fmt::format("blockres plot: '{} {}' ended by signal {} ({})", python, script.string(),
                                WTERMSIG(status), strsignal(WTERMSIG(status))));
    return 128 + WTERMSIG(status);
  }
  return 1;
}

}  // namespace

Subcommand register_plot(CLI::App& app, CommandContext& context)
{
  auto o = std::make_shared<PlotOptions>();
  auto* plot = app.add_subcommand(
      "plot", "draw pictures (PNG or SVG, matplotlib) of result files (.h5: well rates, cumulatives and BHP against "
              "time, several files overlaid; maps of cell fields) and bench suite reports (.json)");
  plot->footer(
      "Each file's kind comes from its content: a result file of 'blockres run' (HDF5) or a 'blockres bench' suite\n"
      "report (JSON, \"schema\": \"blockres-bench-suite\"); a file that is neither is an error (exit code 1).\n"
      "Result files: <stem>_wells_rates, _wells_cumulative (rates x dt summed over the time steps), _wells_bhp\n"
      "(several files: one figure each, the files overlaid, named <stem1>_vs_<stem2>_...), and one map per file,\n"
      "field, layer and report row, <stem>_map_<field>_k<K>_step<I> (inactive cells blank).\n"
      "Suite reports: <stem>_suite_bandwidth (fraction of the copy/read bandwidth against the block size),\n"
      "_suite_fp64, _suite_speedup (over the vendor baseline), _suite_applications (figures of merit and score);\n"
      "several reports: <stem1>_vs_<stem2>_suite_applications and _suite_kernels, the machines side by side.\n"
      "Needs python3 with matplotlib, numpy and h5py (Debian: python3-matplotlib python3-numpy python3-h5py);\n"
      "BLOCKRES_PYTHON names another interpreter, BLOCKRES_PLOT_SCRIPT another script.");
  plot->add_option("files", o->files, "result files (.h5) and bench suite reports (.json)")->required();
  plot->add_option("--output", o->output, "folder for the pictures, created if missing")->capture_default_str();
  plot->add_option("--format", o->format, "picture format")
      ->check(CLI::IsMember({"png", "svg"}))
      ->capture_default_str();
  // One value per occurrence: `--field sw RESULT.h5` must not take RESULT.h5 as a second field.
  plot->add_option("--field", o->fields,
                   "cell field to map, as listed in the file (repeatable; default: pressure and the saturation or "
                   "the first mass fraction)")
      ->allow_extra_args(false);
  plot->add_option("--layer", o->layers, "layer k to map, 1-based as in the deck (repeatable; default: top and bottom)")
      ->allow_extra_args(false)
      ->check(CLI::Validator(
          [](std::string& value) {
            int k = 0;
            return CLI::detail::lexical_cast(value, k) && k >= 1
                       ? std::string()
                       : "layers are numbered from k = 1 (the top), got " + value;
          },
          "K >= 1"));
  plot->add_option("--step", o->steps,
                   "report row to map, 0 = the initial state; negative counts from the end (repeatable; default: -1, "
                   "the last)")
      ->allow_extra_args(false);
  return {plot, [o, &context] { return run_plot(*o, context); }};
}

}  // namespace blockres
