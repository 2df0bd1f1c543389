// How many OpenMP threads the CPU backend uses, and why (issue 20): what the process may use (its CPU
// affinity mask and a cgroup CPU quota, as containers and batch schedulers set them), unless
// --threads or OMP_NUM_THREADS says otherwise; OpenMP's dynamic adjustment on (fewer threads when
// the machine is loaded) unless OMP_DYNAMIC says otherwise. The decision functions are pure so the
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
  bool dynamic = true;  // OpenMP may use fewer threads under load
  std::string text() const;  // "2 threads (affinity mask 2 CPUs, ...; dynamic: fewer under load)"
};

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
// else the affinity mask capped by the quota (rounded down, at least 1). omp_dynamic: the OMP_DYNAMIC
// environment value or nullptr; dynamic stays off only when it says false.
ThreadPolicy choose_threads(int cli_threads, const char* omp_num_threads, const char* omp_dynamic, int affinity,
                            std::optional<double> quota);

// choose_threads for this process and the OpenMP runtime set to it (omp_set_num_threads,
// omp_set_dynamic). Call before the CPU executor is made; current_thread_policy() returns it after.
const ThreadPolicy& apply_thread_policy(int cli_threads);
const ThreadPolicy& current_thread_policy();

}  // namespace blockres
