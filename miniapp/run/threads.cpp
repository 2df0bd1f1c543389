// The CPU backend's thread count from the affinity mask, a cgroup CPU quota and the user's choice
// (see threads.hpp).
#include "miniapp/run/threads.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace blockres {

namespace {

std::string_view trim(std::string_view s)
{
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<long long> to_integer(std::string_view s)
{
  s = trim(s);
  long long v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::string> read_text(const std::filesystem::path& p)
{
  std::ifstream f(p);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void keep_min(std::optional<double>& best, std::optional<double> q)
{
  if (q && (!best || *q < *best)) best = q;
}

}  // namespace

std::string ThreadPolicy::text() const
{
  return fmt::format("{} thread{} ({}{})", threads, threads == 1 ? "" : "s", reason,
                     adaptive ? "; fewer while other work is runnable" : "; fixed");
}

int threads_for_load(int threads, int allowed, int runnable_total, int runnable_self)
{
  const int others = std::max(0, runnable_total - runnable_self);
  return std::clamp(allowed - others, 1, std::max(1, threads));
}

std::optional<int> parse_loadavg_runnable(std::string_view text)
{
  // Fields: 1-, 5- and 15-minute averages, then "runnable/total", then the last pid.
  std::istringstream in{std::string(text)};
  std::string a, b, c, rt;
  if (!(in >> a >> b >> c >> rt)) return std::nullopt;
  const auto slash = rt.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const auto n = to_integer(std::string_view(rt).substr(0, slash));
  if (!n || *n < 0) return std::nullopt;
  return static_cast<int>(*n);
}

char parse_stat_state(std::string_view text)
{
  // "pid (comm) S ...": comm may hold spaces and parentheses, the state follows the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string_view::npos || close + 2 >= text.size()) return '\0';
  return text[close + 2];
}

std::optional<double> parse_cgroup2_cpu_max(std::string_view text)
{
  text = trim(text);
  const auto sp = text.find(' ');
  if (sp == std::string_view::npos) return std::nullopt;
  const std::string_view quota = text.substr(0, sp);
  if (quota == "max") return std::nullopt;
  const auto q = to_integer(quota), p = to_integer(text.substr(sp + 1));
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return double(*q) / double(*p);
}

std::optional<double> parse_cgroup1_quota(std::string_view quota_us, std::string_view period_us)
{
  const auto q = to_integer(quota_us), p = to_integer(period_us);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return double(*q) / double(*p);
}

std::optional<double> cgroup_cpu_quota(std::string_view proc_self_cgroup, const std::filesystem::path& root)
{
  std::optional<double> best;
  std::istringstream lines{std::string(proc_self_cgroup)};
  std::string line;
  while (std::getline(lines, line)) {
    // "hierarchy-id:controllers:path"; v2 is "0::/path", v1's cpu controller "N:cpu,cpuacct:/path".
    const auto a = line.find(':'), b = line.find(':', a == std::string::npos ? 0 : a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::filesystem::path rel = trim(std::string_view(line).substr(b + 1));
    const bool v2 = controllers.empty();
    bool cpu_v1 = false;
    std::string mount;
    if (!v2) {
      std::istringstream cs(controllers);
      std::string c;
      while (std::getline(cs, c, ','))
        if (c == "cpu") cpu_v1 = true;
      if (!cpu_v1) continue;
      // v1 mounts the controller as "cpu,cpuacct" (or "cpu"); try both.
      mount = std::filesystem::exists(root / controllers) ? controllers : "cpu";
    }
    // This cgroup and every ancestor up to the root limit the process.
    for (std::filesystem::path p = rel.relative_path();; p = p.parent_path()) {
      const std::filesystem::path dir = v2 ? root / p : root / mount / p;
      if (v2) {
        if (auto t = read_text(dir / "cpu.max")) keep_min(best, parse_cgroup2_cpu_max(*t));
      } else {
        const auto q = read_text(dir / "cpu.cfs_quota_us"), per = read_text(dir / "cpu.cfs_period_us");
        if (q && per) keep_min(best, parse_cgroup1_quota(*q, *per));
      }
      if (p.empty()) break;
    }
  }
  return best;
}

std::optional<double> process_cpu_quota()
{
  const auto self = read_text("/proc/self/cgroup");
  if (!self) return std::nullopt;
  return cgroup_cpu_quota(*self, "/sys/fs/cgroup");
}

int affinity_cpus()
{
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return std::max(1, omp_get_num_procs());
  return std::max(1, CPU_COUNT(&set));
}

ThreadPolicy choose_threads(int cli_threads, const char* omp_num_threads, const char* omp_dynamic, int affinity,
                            std::optional<double> quota, int online_cpus)
{
  ThreadPolicy p;
  if (omp_dynamic && *omp_dynamic) {
    std::string v(trim(omp_dynamic));
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    p.adaptive = !(v == "false" || v == "0" || v == "no" || v == "off");
  }
  if (affinity < online_cpus) p.adaptive = false;  // the machine-wide runnable count is not about our CPUs
  // An explicit count is honoured up to the machine's CPUs: more threads cannot run at once, only wait
  // at every barrier, and thousands of them fail to start (libgomp: "Thread creation failed").
  const int machine = std::max({1, online_cpus, affinity});
  const auto capped = [&](long long asked, std::string what) {
    p.threads = static_cast<int>(std::min<long long>(asked, machine));
    p.reason = asked > machine ? fmt::format("{}, capped at the machine's {} CPU{}", what, machine,
                                             machine == 1 ? "" : "s")
                               : std::move(what);
    return p;
  };
  if (cli_threads > 0) return capped(cli_threads, fmt::format("--threads {}", cli_threads));
  if (omp_num_threads && *omp_num_threads) {
    std::string_view v = omp_num_threads;
    if (const auto comma = v.find(','); comma != std::string_view::npos) v = v.substr(0, comma);
    if (const auto n = to_integer(v); n && *n > 0) return capped(*n, fmt::format("OMP_NUM_THREADS={}", omp_num_threads));
  }
  affinity = std::max(1, affinity);
  p.threads = affinity;
  p.reason = fmt::format("affinity mask {} CPU{}", affinity, affinity == 1 ? "" : "s");
  if (quota) {
    const int q = std::max(1, static_cast<int>(std::floor(*quota + 1e-9)));
    p.threads = std::min(p.threads, q);
    p.reason += fmt::format(", cgroup CPU quota {:.3g}", *quota);
  } else {
    p.reason += ", no cgroup CPU quota";
  }
  return p;
}

namespace {
ThreadPolicy& policy_slot()
{
  static ThreadPolicy p{omp_get_max_threads(), "OpenMP default", false};
  return p;
}

struct LoadState {
  std::chrono::steady_clock::time_point last{};
  int current = 0;       // threads set by the last sample (0: none yet)
  int up_votes = 0;      // consecutive samples that allowed more threads
  long samples = 0, reduced = 0;
};
LoadState& load_state()
{
  static LoadState s;
  return s;
}

// CPUs online in the machine (omp_get_num_procs counts the affinity mask, not the machine).
int online_cpus()
{
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

// Runnable threads of this process (the caller is one of them).
int runnable_self()
{
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    const auto t = read_text(e.path() / "stat");
    if (t && parse_stat_state(*t) == 'R') ++n;
  }
  return std::max(n, 1);
}
// Set while the OpenMP threads start (start_threads): libgomp ends the process with exit(1) and
// "libgomp: Thread creation failed: ..." when it cannot create one (a memory or process limit, a
// huge OMP_STACKSIZE); this atexit handler then says which setting asked for them.
std::atomic<bool> g_starting_threads{false};
void explain_thread_start_failure()
{
  if (!g_starting_threads.load()) return;
  std::fflush(stdout);
  const ThreadPolicy& p = policy_slot();
  std::fprintf(stderr, "error: could not start %d OpenMP threads (%s): lower --threads or OMP_NUM_THREADS (or "
               "OMP_STACKSIZE)\n", p.threads, p.reason.c_str());
}

// Starts the thread team now, before the run writes anything, so that a failure to create threads
// ends it with a message naming the setting and no temporaries to clean up.
void start_threads()
{
  static const bool registered = std::atexit(explain_thread_start_failure) == 0;
  (void)registered;
  g_starting_threads.store(true);
  int started = 0;
#pragma omp parallel reduction(+ : started)
  started += 1;
  g_starting_threads.store(false);
}
}  // namespace

const ThreadPolicy& apply_thread_policy(int cli_threads)
{
  ThreadPolicy p = choose_threads(cli_threads, std::getenv("OMP_NUM_THREADS"), std::getenv("OMP_DYNAMIC"),
                                  affinity_cpus(), process_cpu_quota(), online_cpus());
  if (p.threads == 1) p.adaptive = false;  // nothing to adapt
  // Not omp_set_dynamic: libgomp's own adjustment follows the 1-minute load average, too slow for a
  // neighbour that starts with us, and it outlives the load (an idle run right after a build used one
  // thread: the 60x60x20 assembly then took twice as long).
  omp_set_num_threads(p.threads);
  policy_slot() = std::move(p);
  load_state() = {};
  start_threads();
  return policy_slot();
}

void set_thread_count_here(int threads) { omp_set_num_threads(std::clamp(threads, 1, policy_slot().threads)); }

void adapt_threads_to_load()
{
  const ThreadPolicy& p = policy_slot();
  if (!p.adaptive) return;
  LoadState& s = load_state();
  const auto now = std::chrono::steady_clock::now();
  if (s.current > 0 && now - s.last < std::chrono::milliseconds(20)) return;
  s.last = now;
  const auto text = read_text("/proc/loadavg");
  const auto total = text ? parse_loadavg_runnable(*text) : std::nullopt;
  if (!total) return;
  const int want = threads_for_load(p.threads, p.threads, *total, runnable_self());
  // Fewer threads at once; more only after two samples in a row allow them (a momentary lull of
  // the other work should not bring back barriers that then wait for it).
  int next = s.current == 0 ? want : s.current;
  if (want < next) {
    next = want, s.up_votes = 0;
  } else if (want > next && ++s.up_votes >= 2) {
    next = want, s.up_votes = 0;
  }
  if (next != s.current) omp_set_num_threads(next);
  s.current = next;
  ++s.samples;
  if (next < p.threads) ++s.reduced;
}

std::string load_summary()
{
  const LoadState& s = load_state();
  if (s.reduced == 0) return "";
  return fmt::format("fewer threads under load in {} of {} samples", s.reduced, s.samples);
}

const ThreadPolicy& current_thread_policy() { return policy_slot(); }

}  // namespace blockres
