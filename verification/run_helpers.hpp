// Helpers for the end-to-end verification tests: run a shipped deck with overrides on a
// backend into a fresh temporary directory and read the result file back.
#pragma once

#include "miniapp/io/deck.hpp"
#include "miniapp/io/results.hpp"
#include "miniapp/run/simulator.hpp"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace blockres::test {

inline std::filesystem::path fresh_dir(const std::string& tag)
{
  static std::atomic<int> counter{0};
  auto d = std::filesystem::temp_directory_path() /
           ("blockres-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline std::string deck_path(const std::string& name) { return std::string(BLOCKRES_SOURCE_DIR) + "/inputs/" + name; }

struct RunResult {
  Results results;
  RunStatistics stats;
  double seconds = 0;
};

inline RunResult run_deck(const std::string& deck, const std::vector<std::string>& overrides, const ExecPtr& exec,
                          bool verbose = false)
{
  const RunConfig cfg = load_deck(deck, overrides);
  const auto dir = fresh_dir(cfg.output.name);
  const auto out = run_simulation(cfg, exec, {dir, "test", false, {}}, [&](const std::string& line) {
    if (verbose) std::printf("%s\n", line.c_str());
  });
  RunResult r{read_results(out.result_file), out.stats, out.stats.wall_seconds};
  std::filesystem::remove_all(dir);
  return r;
}

// Runs the shipped deck `deck` with `overrides` on `exec` into `dir`, continuing from report `report`
// (-1: the last) of `restart` when given; returns the result file.
inline std::filesystem::path run_into(const ExecPtr& exec, const std::string& deck,
                                      const std::vector<std::string>& overrides, const std::filesystem::path& dir,
                                      const std::filesystem::path& restart = {}, long report = -1)
{
  const RunConfig cfg = load_deck(deck_path(deck), overrides);
  RunOptions o(dir, "test");
  o.restart_file = restart;
  o.restart_report = report;
  return run_simulation(cfg, exec, o, [](const std::string&) {}).result_file;
}

}  // namespace blockres::test
