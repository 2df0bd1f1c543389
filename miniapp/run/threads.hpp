// How many OpenMP threads the CPU backend uses, and why (issue 20): what the process may use (its CPU
// affinity mask and a cgroup CPU quota, as containers and batch schedulers set them), unless
// --threads or OMP_NUM_THREADS says otherwise; and fewer threads while other processes' threads are
// runnable on those CPUs (adapt_threads_to_load), unless OMP_DYNAMIC=false. The decision functions are pure so the
// tests can feed them any mask, quota and environment.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace blockres {

struct ThreadPolicy {
  int threads = 1;
  std::string reason;  // e.g. "affinity mask 2 CPUs, no cgroup CPU quota"
  // Fewer threads while other processes' threads are runnable on the CPUs we may use
  // (adapt_threads_to_load); off with OMP_DYNAMIC=false or when the affinity mask leaves out some
  // of the machine's CPUs (the system-wide runnable count then says nothing about ours).
  bool adaptive = true;
  std::string text() const;  // "2 threads (affinity mask 2 CPUs, ...; fewer while other work is runnable)"
};

// The load adaptation's decision: of `allowed` CPUs, those not taken by other runnable threads
// (runnable_total counts every runnable thread of the machine, runnable_self ours), at least 1 and at
// most `threads`.
int threads_for_load(int threads, int allowed, int runnable_total, int runnable_self);
// The runnable count of /proc/loadavg ("0.10 0.20 0.30 3/345 1234" -> 3); nullopt if unreadable.
std::optional<int> parse_loadavg_runnable(std::string_view text);
// The state letter of a /proc/<pid>/task/<tid>/stat line ("123 (name) R ..." -> 'R'); '\0' if none.
char parse_stat_state(std::string_view text);

// Called by the time loop once per Newton iteration: when the policy is adaptive, at most every
// 20 ms, sets the OpenMP thread count to threads_for_load of the machine's current runnable
// threads. Two side-by-side runs, or a run beside busy processes, then run their parallel regions
// on one thread instead of waiting at every barrier for a descheduled thread; an idle machine keeps
// every thread. Counts the samples for load_summary().
void adapt_threads_to_load();
// "" when no sample reduced the threads, else e.g. "fewer threads under load in 40 of 124 samples".
std::string load_summary();

// cgroup v2 cpu.max ("max 100000" or "150000 100000"): the quota in CPUs, nullopt when unlimited or
// unreadable.
std::optional<double> parse_cgroup2_cpu_max(std::string_view text);
// cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us: quota / period in CPUs, nullopt when the quota is -1.
std::optional<double> parse_cgroup1_quota(std::string_view quota_us, std::string_view period_us);
// The smallest CPU quota on the path of this process's cgroup (every ancestor limits it), from
// /proc/self/cgroup-like text and a cgroup mount root (v2 unified, or v1's cpu controller).
std::optional<double> cgroup_cpu_quota(std::string_view proc_self_cgroup, const std::filesystem::path& root);
// The quota of the running process (/proc/self/cgroup, /sys/fs/cgroup), nullopt when none.
std::optional<double> process_cpu_quota();
// CPUs in the process's affinity mask (sched_getaffinity), at least 1.
int affinity_cpus();

// The decision: cli_threads > 0 (--threads) wins, then a valid OMP_NUM_THREADS (its first entry),
// either capped at the machine's CPUs (online_cpus, or the affinity mask if larger; the reason says
// "capped"), else the affinity mask capped by the quota (rounded down, at least 1). omp_dynamic: the OMP_DYNAMIC
// environment value or nullptr; the load adaptation stays off when it says false, or when the
// affinity mask has fewer CPUs than the machine (online_cpus).
ThreadPolicy choose_threads(int cli_threads, const char* omp_num_threads, const char* omp_dynamic, int affinity,
                            std::optional<double> quota, int online_cpus);

// choose_threads for this process and the OpenMP runtime set to it (omp_set_num_threads), its threads
// started at once (a failure to create them ends the process with exit code 1 and a line naming
// --threads / OMP_NUM_THREADS, before the run writes anything). Call before the CPU executor is
// made; current_thread_policy() returns it after.
const ThreadPolicy& apply_thread_policy(int cli_threads);
const ThreadPolicy& current_thread_policy();
// Sets the OpenMP thread count of the calling thread's parallel regions (at least 1, at most the
// policy's): a thread the run starts (the background writer's) begins with the environment's
// OMP_NUM_THREADS, not the policy's. Note libgomp: while more OpenMP threads exist than CPUs, every
// team spins far less at its barriers, which on the CPU backend made the time loop's many short
// regions 1.8x slower (a 2-CPU machine, the quarter five-spot deck) when the writer had a team too.
void set_thread_count_here(int threads);

}  // namespace blockres
