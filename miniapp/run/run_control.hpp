// Clean interruption of `blockres run` (SIGINT/SIGTERM) and the lock that keeps two runs off one
// output name (stale temporaries of a dead writer are removed, a live writer's never).
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace blockres {

// ---- interruption -----------------------------------------------------------------------------

// Installs handlers for SIGINT and SIGTERM that only record the signal (async-signal safe); the time
// loop polls interrupt_signal() between Newton iterations. main installs them first thing, so a
// signal early in the run is a clean stop too. Batch systems (Slurm, coreutils `timeout`, mpirun)
// signal the whole process group, so one stop request often arrives two or three times within
// microseconds: a repeat within interrupt_burst_ms of the first signal is the same burst and is
// ignored; a signal later than that is a deliberate second request and ends the process at once
// (one line on stderr, exit 128 + signal; the next run into the same output removes whatever
// temporaries that leaves).
constexpr int interrupt_burst_ms = 500;
void install_interrupt_handlers();
// Back to the default action (subcommands that do not poll interrupt_signal()); a signal recorded
// meanwhile is raised again, so it acts as it would have.
void restore_default_interrupt_handlers();
// The signal received (SIGINT, SIGTERM), 0 while none was.
int interrupt_signal();
// For tests: as if `signal` had been received (0 clears).
void set_interrupt_signal(int signal);
// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int signal);

// The run stopped on a signal after removing its temporary files. what(): one line saying where to
// restart from (or that nothing restartable exists); main prints it and exits 128 + signal.
struct Interrupted : std::runtime_error {
  Interrupted(int sig, const std::string& message) : std::runtime_error(message), signal(sig) {}
  int signal;
};

// ---- the output lock --------------------------------------------------------------------------

// Another live blockres writes the same output (exit code 1).
struct OutputBusy : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The temporaries a run writes for <dir>/<name>: the result, checkpoint and .pvd temporaries and the
// VTK staging directory (results.hpp, vtk_output.hpp).
std::vector<std::filesystem::path> output_temporaries(const std::filesystem::path& dir, const std::string& name);

// <dir>/<name>.lock, holding "pid host" of the run writing <dir>/<name>.*, for the run's lifetime.
// Taking it: a lock whose writer is gone (same host, the pid no longer exists) is stale, and so are
// the temporaries beside it (and temporaries without any lock, e.g. of a killed older blockres):
// they are removed. A lock whose writer is alive (or on another host, where it cannot be checked)
// is left alone with its temporaries, and the constructor throws OutputBusy naming the pid.
class OutputLock {
 public:
  OutputLock(const std::filesystem::path& dir, const std::string& name);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Stale temporaries removed when the lock was taken (for the log).
  const std::vector<std::filesystem::path>& removed() const { return removed_; }

 private:
  std::filesystem::path path_;
  std::vector<std::filesystem::path> removed_;
};

// Whether process `pid` exists on this host (kill(pid, 0): ESRCH is gone, EPERM is alive).
bool process_alive(long pid);

}  // namespace blockres
