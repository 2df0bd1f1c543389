// The CPU backend's thread count (issue 20): cgroup quotas parsed from v1 and v2 files, the smallest
// quota on the cgroup's path, the precedence --threads > OMP_NUM_THREADS > affinity mask capped by the
// quota, OMP_DYNAMIC respected, and the OpenMP runtime set to the choice.
#include "miniapp/run/threads.hpp"

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>

#include <filesystem>
#include <fstream>

using namespace blockres;

namespace {

void write(const std::filesystem::path& p, const std::string& text)
{
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST(Threads, CgroupFilesParse)
{
  EXPECT_FALSE(parse_cgroup2_cpu_max("max 100000\n"));
  EXPECT_DOUBLE_EQ(*parse_cgroup2_cpu_max("150000 100000\n"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_cgroup2_cpu_max("  400000 100000"), 4.0);
  EXPECT_FALSE(parse_cgroup2_cpu_max("garbage"));
  EXPECT_FALSE(parse_cgroup2_cpu_max("0 100000"));
  EXPECT_FALSE(parse_cgroup1_quota("-1\n", "100000\n"));
  EXPECT_DOUBLE_EQ(*parse_cgroup1_quota("50000\n", "100000\n"), 0.5);
  EXPECT_FALSE(parse_cgroup1_quota("x", "100000"));
}

TEST(Threads, SmallestQuotaOnTheCgroupPath)
{
  const auto root = std::filesystem::temp_directory_path() / "blockres_test_cgroup";
  std::filesystem::remove_all(root);
  // v2: the job's slice allows 3 CPUs, the process's own cgroup 6: the slice limits it.
  write(root / "v2/cpu.max", "max 100000\n");
  write(root / "v2/job.slice/cpu.max", "300000 100000\n");
  write(root / "v2/job.slice/step/cpu.max", "600000 100000\n");
  EXPECT_DOUBLE_EQ(*cgroup_cpu_quota("0::/job.slice/step\n", root / "v2"), 3.0);
  EXPECT_FALSE(cgroup_cpu_quota("0::/\n", root / "v2"));   // the root: unlimited
  EXPECT_FALSE(cgroup_cpu_quota("0::/other\n", root / "v2"));  // nothing readable below the root
  // v1: the cpu controller mounted as cpu,cpuacct; other controllers' lines are ignored.
  write(root / "v1/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
  write(root / "v1/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  write(root / "v1/memory/docker/abc/cpu.cfs_quota_us", "100000\n");  // not the cpu controller
  EXPECT_DOUBLE_EQ(*cgroup_cpu_quota("4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n", root / "v1"), 2.5);
  std::filesystem::remove_all(root);
}

TEST(Threads, ChoicePrecedence)
{
  // The affinity mask, capped by the quota rounded down (at least 1).
  auto p = choose_threads(0, nullptr, nullptr, 8, std::nullopt, 8);
  EXPECT_EQ(p.threads, 8);
  EXPECT_NE(p.reason.find("affinity mask 8 CPUs"), std::string::npos);
  EXPECT_NE(p.reason.find("no cgroup CPU quota"), std::string::npos);
  EXPECT_TRUE(p.adaptive);
  EXPECT_EQ(choose_threads(0, nullptr, nullptr, 8, 2.5, 8).threads, 2);
  EXPECT_NE(choose_threads(0, nullptr, nullptr, 8, 2.5, 8).reason.find("cgroup CPU quota 2.5"), std::string::npos);
  EXPECT_EQ(choose_threads(0, nullptr, nullptr, 8, 0.5, 8).threads, 1);
  EXPECT_EQ(choose_threads(0, nullptr, nullptr, 2, 16.0, 2).threads, 2);
  // OMP_NUM_THREADS (its first entry) beats the mask; --threads beats both.
  p = choose_threads(0, "3", nullptr, 8, 2.0, 8);
  EXPECT_EQ(p.threads, 3);
  EXPECT_EQ(p.reason, "OMP_NUM_THREADS=3");
  EXPECT_EQ(choose_threads(0, "4,2", nullptr, 8, std::nullopt, 8).threads, 4);
  EXPECT_EQ(choose_threads(0, "zero", nullptr, 8, std::nullopt, 8).threads, 8);  // invalid: ignored
  EXPECT_EQ(choose_threads(0, "", nullptr, 8, std::nullopt, 8).threads, 8);
  p = choose_threads(5, "3", nullptr, 8, 2.0, 8);
  EXPECT_EQ(p.threads, 5);
  EXPECT_EQ(p.reason, "--threads 5");
  // OMP_DYNAMIC=false keeps the count fixed.
  // Explicit counts are capped at the machine's CPUs (online, or the affinity mask if larger), and
  // the reason says so naming the option or variable (issue 28: --threads 4096, OMP_NUM_THREADS=100000).
  p = choose_threads(4096, nullptr, nullptr, 2, std::nullopt, 2);
  EXPECT_EQ(p.threads, 2);
  EXPECT_EQ(p.reason, "--threads 4096, capped at the machine's 2 CPUs");
  p = choose_threads(0, "100000", nullptr, 4, std::nullopt, 8);
  EXPECT_EQ(p.threads, 8);
  EXPECT_EQ(p.reason, "OMP_NUM_THREADS=100000, capped at the machine's 8 CPUs");
  EXPECT_EQ(choose_threads(0, "100000", nullptr, 1, std::nullopt, 1).reason,
            "OMP_NUM_THREADS=100000, capped at the machine's 1 CPU");
  EXPECT_EQ(choose_threads(6, nullptr, nullptr, 2, 1.0, 8).threads, 6);  // more than the mask: the user's choice
  EXPECT_FALSE(choose_threads(0, nullptr, "false", 8, std::nullopt, 8).adaptive);
  EXPECT_FALSE(choose_threads(0, nullptr, "FALSE", 8, std::nullopt, 8).adaptive);
  EXPECT_TRUE(choose_threads(0, nullptr, "true", 8, std::nullopt, 8).adaptive);
  EXPECT_NE(choose_threads(1, nullptr, "false", 8, std::nullopt, 8).text().find("1 thread (--threads 1; fixed)"),
            std::string::npos);
}

TEST(Threads, LoadAdaptation)
{
  // Alone (only our threads runnable): every thread.
  EXPECT_EQ(threads_for_load(2, 2, 2, 2), 2);
  EXPECT_EQ(threads_for_load(2, 2, 1, 1), 2);
  // A second run's thread, or two busy loops, on a 2-CPU machine: one thread.
  EXPECT_EQ(threads_for_load(2, 2, 2, 1), 1);
  EXPECT_EQ(threads_for_load(2, 2, 4, 1), 1);
  // 8 CPUs, 3 other runnable threads: 5 (never more than the policy, never fewer than 1).
  EXPECT_EQ(threads_for_load(8, 8, 4, 1), 5);
  EXPECT_EQ(threads_for_load(4, 8, 2, 1), 4);
  EXPECT_EQ(threads_for_load(8, 8, 40, 1), 1);
  EXPECT_EQ(*parse_loadavg_runnable("0.37 1.60 2.22 3/345 12345\n"), 3);
  EXPECT_FALSE(parse_loadavg_runnable("garbage"));
  EXPECT_EQ(parse_stat_state("1234 (blockres) R 1 2 3"), 'R');
  EXPECT_EQ(parse_stat_state("1234 (a) b (c)) S 1 2 3"), 'S');
  EXPECT_EQ(parse_stat_state("1234 (x"), '\0');
  // Off when the mask leaves out CPUs of the machine (a cpuset job), or with OMP_DYNAMIC=false.
  EXPECT_FALSE(choose_threads(0, nullptr, nullptr, 4, std::nullopt, 64).adaptive);
  EXPECT_TRUE(choose_threads(0, nullptr, nullptr, 64, std::nullopt, 64).adaptive);
  // The live reading does not throw and keeps the count within the policy.
  apply_thread_policy(2);
  for (int i = 0; i < 3; ++i) adapt_threads_to_load();
  EXPECT_GE(omp_get_max_threads(), 1);
  EXPECT_LE(omp_get_max_threads(), 2);
}

TEST(Threads, AppliedToTheRuntime)
{
  EXPECT_GE(affinity_cpus(), 1);
  // 3 threads where the machine has them (an explicit count is capped at its CPUs).
  const int machine = std::max(affinity_cpus(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  const int three = std::min(3, machine);
  const ThreadPolicy& p = apply_thread_policy(3);
  EXPECT_EQ(p.threads, three);
  EXPECT_EQ(omp_get_max_threads(), three);
  EXPECT_EQ(current_thread_policy().threads, three);
  EXPECT_EQ(current_thread_policy().reason,
            three == 3 ? std::string("--threads 3") : fmt::format("--threads 3, capped at the machine's {} CPU{}", machine,
                                                                   machine == 1 ? "" : "s"));
  apply_thread_policy(1);
  EXPECT_EQ(omp_get_max_threads(), 1);
}
