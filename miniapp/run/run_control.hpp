// Clean interruption of `blockres run` (SIGINT/SIGTERM) and the lock that keeps two runs off one
// output name (a kernel lock: stale temporaries of a dead writer are removed, a live writer's never).
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

// <dir>/<name>.lock, with an exclusive flock(2) held on it for the run's lifetime: the kernel
// releases it when its holder ends however it ends (SIGKILL, a crash; a killed process that is still
// a zombie holds nothing), so a lock is never stale and a reused pid never blocks. The file holds
// "pid host" of the holder, as information only (the message naming who writes the output).
// Taking it: when the lock is free, whatever temporaries are beside it (and any lock file left by a
// killed writer) belong to a writer that is gone: they are removed. When another open file holds it
// (another blockres run, on this host or, over NFS, another), nothing is touched and the constructor
// throws OutputBusy naming the pid and host the file records.
class OutputLock {
 public:
  OutputLock(const std::filesystem::path& dir, const std::string& name);
  ~OutputLock();  // removes the lock file, then releases the lock
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Stale temporaries removed when the lock was taken (for the log).
  const std::vector<std::filesystem::path>& removed() const { return removed_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;  // the open lock file the flock is held on
  std::vector<std::filesystem::path> removed_;
};

}  // namespace blockres
