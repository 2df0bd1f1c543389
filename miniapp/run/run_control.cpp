// Signal flag for clean interruption, and the per-output flock with its stale-temporary clean-up.
#include "miniapp/run/run_control.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>

namespace blockres {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_signal{0};
// CLOCK_MONOTONIC of the first signal in ns (0: none yet). Set by compare-exchange: process-directed
// signals may be handled by two threads (OpenMP workers) at once, and the second must see the first's
// time, not 0.
std::atomic<long long> g_first_signal_ns{0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<long long>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

long long monotonic_ns()
{
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal safe
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// Writes `text` to stderr with write(2) only (async-signal safe).
void write_stderr(const char* text)
{
  std::size_t n = 0;
  while (text[n]) ++n;
  while (n > 0) {
    const ssize_t w = ::write(2, text, n);
    if (w <= 0) return;
    text += w, n -= static_cast<std::size_t>(w);
  }
}

extern "C" void record_signal(int sig)
{
  const int saved_errno = errno;
  const long long now = std::max(1LL, monotonic_ns());
  long long first = 0;
  if (g_first_signal_ns.compare_exchange_strong(first, now)) {
    g_signal.store(sig);  // the first: a clean stop at the next poll
  } else if (now - first >= static_cast<long long>(interrupt_burst_ms) * 1000000LL) {
    // A deliberate second request: stop now, without unwinding (nothing else is safe here).
    write_stderr(sig == SIGINT ? "blockres: second SIGINT: stopped at once; the next run into the same output "
                                 "removes the temporaries left\n"
                               : "blockres: second SIGTERM: stopped at once; the next run into the same output "
                                 "removes the temporaries left\n");
    ::_exit(128 + sig);
  }
  // else: a repeat of the same burst (the process group signalled again): already recorded.
  errno = saved_errno;
}

std::string host_name()
{
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// The outputs whose lock this process holds (OutputLock), so that a run ended by exit() without
// unwinding (libgomp's fatal errors, a library's exit) or by std::terminate still removes its
// temporaries and lock file. Only SIGKILL-like ends (and the deliberate second signal) leave them,
// for the next run into the output to remove.
struct HeldOutput {
  fs::path dir, lock;
  std::string name;
};
std::vector<HeldOutput>& held_outputs()
{
  static std::vector<HeldOutput> held;
  return held;
}

void remove_held_outputs_temporaries()
{
  std::error_code ec;
  for (const HeldOutput& h : held_outputs()) {
    for (const fs::path& p : output_temporaries(h.dir, h.name)) fs::remove_all(p, ec);
    fs::remove(h.lock, ec);
  }
  held_outputs().clear();
}

std::terminate_handler g_previous_terminate = nullptr;
[[noreturn]] void remove_temporaries_then_terminate()
{
  remove_held_outputs_temporaries();
  if (g_previous_terminate) g_previous_terminate();
  std::abort();
}

void remove_temporaries_on_every_exit()
{
  static const bool registered = [] {
    held_outputs();  // constructed first, so destroyed after the atexit handler has run
    std::atexit(remove_held_outputs_temporaries);
    g_previous_terminate = std::set_terminate(remove_temporaries_then_terminate);
    return true;
  }();
  (void)registered;
}

}  // namespace

void install_interrupt_handlers()
{
  struct sigaction sa {};
  sa.sa_handler = record_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);  // one handler at a time per thread
  sigaddset(&sa.sa_mask, SIGTERM);
  // No SA_RESETHAND: repeats are decided by record_signal (see interrupt_burst_ms). SA_RESTART:
  // system calls in flight (pipes, driver waits) resume instead of failing with EINTR.
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

void restore_default_interrupt_handlers()
{
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  if (const int sig = g_signal.load()) ::raise(sig);
}

int interrupt_signal() { return g_signal.load(); }
void set_interrupt_signal(int signal)
{
  g_signal.store(signal);
  g_first_signal_ns.store(signal ? std::max(1LL, monotonic_ns()) : 0);
}

std::string signal_name(int signal)
{
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return fmt::format("signal {}", signal);
  }
}

std::vector<fs::path> output_temporaries(const fs::path& dir, const std::string& name)
{
  return {dir / (name + ".h5.tmp"), dir / (name + ".checkpoint.h5.tmp"), dir / (name + ".pvd.tmp"),
          dir / (name + "_vtk.tmp")};
}

OutputLock::OutputLock(const fs::path& dir, const std::string& name) : path_(dir / (name + ".lock"))
{
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw std::runtime_error(
          fmt::format("cannot open the lock file '{}': {}", path_.string(), std::strerror(errno)));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      // Who holds it, as the holder wrote it (it may not have yet: just taken).
      long pid = 0;
      std::string host;
      {
        std::ifstream in(path_);
        in >> pid >> host;
      }
      ::close(fd_);
      fd_ = -1;
      if (err != EWOULDBLOCK)
        throw std::runtime_error(fmt::format("cannot lock '{}': {}", path_.string(), std::strerror(err)));
      const std::string who = pid > 0 ? fmt::format("pid {}{}", pid, host.empty() || host == host_name()
                                                                          ? std::string()
                                                                          : " on host " + host)
                                      : std::string("just starting");
      throw OutputBusy(fmt::format(
          "output '{}' is being written by another blockres run ({}; it holds the lock on '{}'): choose another "
          "output.name or directory, or wait for it to end",
          (dir / name).string(), who, path_.string()));
    }
    // Locked. The holder we waited on removes the file before it releases the lock: if the path no
    // longer names the file we locked, our lock is on a deleted file: open the path again.
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      break;
    ::close(fd_);
    fd_ = -1;
  }
  // Ours now: "pid host" replaces whatever a dead writer left in the file.
  const std::string me = fmt::format("{} {}\n", ::getpid(), host_name());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    const int err = errno;
    fs::remove(path_, ec);
    ::close(fd_);
    throw std::runtime_error(fmt::format("cannot write the lock file '{}': {}", path_.string(), std::strerror(err)));
  }
  remove_temporaries_on_every_exit();
  held_outputs().push_back({dir, path_, name});
  // Whatever temporaries remain belong to a writer that is gone.
  for (const fs::path& p : output_temporaries(dir, name)) {
    if (fs::exists(fs::symlink_status(p, ec))) {
      fs::remove_all(p, ec);
      if (!ec) removed_.push_back(p);
    }
  }
}

OutputLock::~OutputLock()
{
  // Removed while still held, so a run that opens the path after this finds no file or a new one.
  std::error_code ec;
  fs::remove(path_, ec);
  ::close(fd_);
  auto& held = held_outputs();
  std::erase_if(held, [&](const HeldOutput& h) { return h.lock == path_; });
}

}  // namespace blockres
