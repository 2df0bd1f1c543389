// The measuring machinery every bench report shares, proven able to fail on the CPU: the timing loop
// poisons the output before the last timed repetition (a kernel that stops writing after the warm-up
// is caught), a wrong baseline is flagged and gets no speedup, --strict turns a missed target into a
// failing exit code, the provenance names the diff a modified tree was built from, and a report file is
// JSON that reads back with its keys in order and a NaN as null.
#include "miniapp/bench/bench_timing.hpp"
#include "miniapp/bench/report.hpp"
#include "miniapp/bench/bench_common.hpp"
#include "miniapp/io/h5.hpp"
#include "miniapp/io/json_file.hpp"
#include "miniapp/io/results.hpp"
#include "miniapp/io/version.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

using namespace blockres;

namespace {

// A fake clock: every timed launch takes 1 ms.
struct FakeClock {
  void start() {}
  double stop() { return 1.0; }
};

// A "kernel" that writes its result y = 2 x only in its first `good_calls` calls, then writes
// nothing: the failure a poison before the warm-ups cannot see.
struct LazyKernel {
  int good_calls;
  int calls = 0;
  void operator()(const std::vector<double>& x, std::vector<double>& y)
  {
    if (calls++ < good_calls)
      for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i];
  }
};

bool correct(const std::vector<double>& x, const std::vector<double>& y)
{
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!(y[i] == 2.0 * x[i])) return false;
  return true;
}

std::string read_text(const std::string& path)
{
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST(BenchTiming, PoisonBeforeTheLastTimedRepetitionCatchesAKernelThatStopsWriting)
{
  const std::vector<double> x{1.0, -2.0, 3.5, 0.25, 7.0};
  std::vector<double> y(x.size());
  auto poison = [&] { std::fill(y.begin(), y.end(), bench::nan_v); };
  FakeClock clock;
  {  // correct in warm-ups and all but the last timed call: caught
    LazyKernel k{2 + 4};
    const auto t = bench::time_reps(clock, 2, 5, [&] { k(x, y); }, [] {}, poison);
    EXPECT_EQ(k.calls, 7);
    EXPECT_EQ(t.median_ms, 1.0);
    EXPECT_FALSE(correct(x, y));
  }
  {  // the old way, one poison before the warm-ups: the same kernel looks correct
    LazyKernel k{2 + 4};
    poison();
    (void)bench::time_reps(clock, 2, 5, [&] { k(x, y); }, [] {}, [] {});
    EXPECT_TRUE(correct(x, y));
  }
  {  // a kernel that writes every time passes
    LazyKernel k{1000};
    (void)bench::time_reps(clock, 2, 5, [&] { k(x, y); }, [] {}, poison);
    EXPECT_TRUE(correct(x, y));
  }
  {  // poison runs once, before the last repetition's prepare (so prepare may restore inputs)
    std::vector<std::string> order;
    (void)bench::time_reps(clock, 1, 3, [&] { order.push_back("launch"); }, [&] { order.push_back("prepare"); },
                           [&] { order.push_back("poison"); });
    const std::vector<std::string> expected{"prepare", "launch", "prepare", "launch", "prepare",
                                            "launch",  "poison", "prepare", "launch"};
    EXPECT_EQ(order, expected);
  }
  EXPECT_THROW((void)bench::time_reps(clock, 0, 0, [] {}, [] {}, [] {}), std::invalid_argument);
  const auto s = bench::summarize({3.0, 1.0, 2.0, 9.0});
  EXPECT_EQ(s.median_ms, 3.0);
  EXPECT_EQ(s.min_ms, 1.0);
  EXPECT_EQ(s.max_ms, 9.0);
}

TEST(BenchTiming, AWrongBaselineIsFlaggedAndGetsNoSpeedup)
{
  const double tol = 1e-12;
  std::vector<bench::Baseline> b{{"slow", {4.0, 3.9, 4.1}, 1e-15, {}},
                                 {"fast but wrong", {1.0, 0.9, 1.1}, 0.5, {}},
                                 {"nan result", {0.5, 0.5, 0.5}, bench::nan_v, {}},
                                 {"not run", {}, bench::nan_v, {}},
                                 {"fastest correct", {2.0, 1.9, 2.1}, 3e-13, {}}};
  const auto v = bench::judge_baselines(b, tol);
  EXPECT_EQ(v.wrong, (std::vector<bool>{false, true, true, false, false}));
  EXPECT_TRUE(v.any_wrong());
  EXPECT_EQ(v.fastest, 4);  // the wrong ones are faster but do not count
  EXPECT_DOUBLE_EQ(v.speedup(b, 0.5), 4.0);
  EXPECT_DOUBLE_EQ(bench::speedup_over(b, v, 0, 0.5), 8.0);
  EXPECT_TRUE(std::isnan(bench::speedup_over(b, v, 1, 0.5)));
  EXPECT_TRUE(std::isnan(bench::speedup_over(b, v, 2, 0.5)));
  EXPECT_TRUE(std::isnan(bench::speedup_over(b, v, 3, 0.5)));
  b[1].error = 0.0;  // corrected: now the fastest
  EXPECT_EQ(bench::judge_baselines(b, tol).fastest, 1);
  const auto none = bench::judge_baselines({{"wrong", {1.0, 1.0, 1.0}, 1.0}}, tol);
  EXPECT_EQ(none.fastest, -1);
  EXPECT_TRUE(std::isnan(none.speedup({{"wrong", {1.0, 1.0, 1.0}, 1.0}}, 1.0)));
}

TEST(BenchReport, StrictTurnsAMissedTargetIntoAFailingExitCode)
{
  std::vector<std::string> lines;
  auto log = [&](const std::string& s) { lines.push_back(s); };
  ReportChecks c;
  EXPECT_TRUE(c.check(ReportChecks::Kind::correctness, "bsrmv bs 4", true, "error 1e-16", log));
  EXPECT_EQ(c.exit_code(false), 0);
  EXPECT_EQ(c.exit_code(true), 0);
  EXPECT_FALSE(c.check(ReportChecks::Kind::target, "Krylov bytes <= 1.3x", false, "1.41x", log));
  EXPECT_EQ(c.exit_code(false), 0);  // reported
  EXPECT_EQ(c.exit_code(true), 1);   // --strict
  EXPECT_EQ(c.failed(ReportChecks::Kind::target), 1);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "PASS check: bsrmv bs 4: error 1e-16");
  EXPECT_EQ(lines[1], "FAIL target: Krylov bytes <= 1.3x: 1.41x");
  EXPECT_FALSE(c.check(ReportChecks::Kind::correctness, "isai apply", false, "NaN", log));
  EXPECT_EQ(c.exit_code(false), 1);  // a wrong result fails the run either way
  Json j;
  c.write_json(j, true);
  const Json parsed = Json::parse(j.dump(2));  // what a reader of the report gets
  EXPECT_EQ(parsed.at("strict"), true);
  const Json& checks = parsed.at("checks");
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].at("name"), "bsrmv bs 4");
  EXPECT_EQ(checks[0].at("kind"), "correctness");
  EXPECT_EQ(checks[0].at("pass"), true);
  EXPECT_EQ(checks[0].at("detail"), "error 1e-16");
  EXPECT_EQ(checks[1].at("name"), "Krylov bytes <= 1.3x");
  EXPECT_EQ(checks[1].at("kind"), "target");
  EXPECT_EQ(checks[1].at("pass"), false);
  EXPECT_EQ(checks[1].at("detail"), "1.41x");
  EXPECT_EQ(checks[2].at("kind"), "correctness");
  EXPECT_EQ(checks[2].at("pass"), false);
  EXPECT_EQ(c.count(), 3);
}

TEST(BenchReport, ProvenanceNamesTheDiffOfAModifiedTree)
{
  const auto dir = std::filesystem::temp_directory_path() / "blockres_test_provenance";
  std::filesystem::create_directories(dir);
  const std::string report = (dir / "r.json").string();
  std::filesystem::remove(report + ".diff");
  Json j;
  write_provenance(j, report);
  const Json json = Json::parse(j.dump(2));
  const std::string sha = git_diff_sha256();
  EXPECT_EQ(json.at("git_commit"), git_commit());
  EXPECT_EQ(json.at("diff_sha256"), sha);
  if (sha.empty()) {  // a clean tree (CI): no diff, no file, no "-dirty"
    EXPECT_EQ(json.at("tree_modified"), false);
    EXPECT_FALSE(json.contains("diff_file"));
    EXPECT_FALSE(std::filesystem::exists(report + ".diff"));
    EXPECT_EQ(std::string(git_commit()).find("-dirty"), std::string::npos);
    EXPECT_TRUE(git_diff().empty());
    EXPECT_EQ(provenance_text(), fmt::format("git {}", git_commit()));
  } else {  // modified: the diff the binary was built from, beside the report, byte for byte
    EXPECT_EQ(sha.size(), 64u);
    EXPECT_EQ(json.at("tree_modified"), true);
    EXPECT_NE(std::string(git_commit()).find("-dirty"), std::string::npos);
    if (!git_diff().empty()) {
      EXPECT_EQ(json.at("diff_file"), "r.json.diff");
      EXPECT_EQ(read_text(report + ".diff"), std::string(git_diff()));
    }
    EXPECT_NE(provenance_text().find(sha.substr(0, 12)), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST(BenchReport, AReportFileIsJsonWithItsKeysInOrderAndNoNumberForANaN)
{
  const auto dir = std::filesystem::temp_directory_path() / "blockres_test_report_file";
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "sub" / "r.json").string();  // the folder is created
  Json j;
  j["zeta"] = "first";
  j["alpha"] = 2;
  j["time"] = timing_json(bench::summarize({3.0, 1.0, 2.0}));
  j["not_measured"] = bench::nan_v;
  j["too_fast"] = std::numeric_limits<double>::infinity();
  j["iterations"] = Json(nullptr);  // a count that does not exist: null, not a NaN double
  j["name"] = std::string("bad \xff byte");
  write_json_file(path, j);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  const std::string text = read_text(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find("NaN"), std::string::npos) << text;
  EXPECT_EQ(text.find("nan"), std::string::npos) << text;
  EXPECT_EQ(text.find("inf"), std::string::npos) << text;

  const Json r = read_json_file(path);
  std::vector<std::string> keys;
  for (const auto& [k, v] : r.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"zeta", "alpha", "time", "not_measured", "too_fast", "iterations", "name"}));
  EXPECT_EQ(r.at("alpha"), 2);
  EXPECT_TRUE(r.at("alpha").is_number_integer());
  EXPECT_EQ(r.at("time").at("median_ms"), 2.0);
  EXPECT_EQ(r.at("time").at("min_ms"), 1.0);
  EXPECT_EQ(r.at("time").at("max_ms"), 3.0);
  for (const char* k : {"not_measured", "too_fast", "iterations"}) {
    EXPECT_TRUE(r.at(k).is_null()) << k;
    EXPECT_THROW((void)r.at(k).get<double>(), Json::type_error) << k << ": null must not read as a number";
  }
  EXPECT_EQ(r.at("name"), "bad \xef\xbf\xbd byte");  // an invalid byte becomes U+FFFD, the report is kept

  // A malformed or missing file is an error naming it.
  {
    std::ofstream f(path, std::ios::trunc);
    f << "{\"a\": 1,}";
  }
  try {
    (void)read_json_file(path);
    ADD_FAILURE() << "a malformed file parsed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)read_json_file((dir / "missing.json").string()), std::runtime_error);
  std::filesystem::remove_all(dir);
}

// ---- the Jacobian file of `run --write-jacobian` read by `bench ... --jacobian` (issue 28) -----------------

namespace {

// A 1x1-block Jacobian of one block row, with the root attribute layout_version when `version` is given.
std::filesystem::path write_tiny_jacobian(const std::string& stem, std::optional<std::int64_t> version)
{
  const auto path = std::filesystem::temp_directory_path() / fmt::format("blockres_{}_{}.h5", stem, ::getpid());
  auto f = blockres::h5::File::create(path);
  if (version) blockres::h5::write_attribute(f.id(), "layout_version", *version);
  blockres::h5::Id g = blockres::h5::create_group(f.id(), "jacobian");
  blockres::h5::write_attribute(g, "block_size", std::int64_t(1));
  blockres::h5::write_attribute(g, "block_rows", std::int64_t(1));
  const std::vector<std::int32_t> row_ptr = {0, 1}, col_ind = {0};
  const std::vector<double> values = {2.0};
  blockres::h5::write_dataset(g, "row_ptr", std::span<const std::int32_t>(row_ptr));
  blockres::h5::write_dataset(g, "col_ind", std::span<const std::int32_t>(col_ind));
  blockres::h5::write_dataset(g, "values", std::span<const double>(values));
  g.reset();
  f.close();
  return path;
}

}  // namespace

TEST(BenchJacobianFile, UnknownLayoutVersionIsRefusedKnownAndUnversionedRead)
{
  using blockres::benchutil::read_jacobian;
  const auto v99 = write_tiny_jacobian("jacobian_v99", 99);
  try {
    read_jacobian(v99.string());
    ADD_FAILURE() << "a Jacobian file of layout version 99 was read";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(v99.string()), std::string::npos) << what;
    EXPECT_NE(what.find("layout version 99, which this blockres does not know"), std::string::npos) << what;
    EXPECT_NE(what.find("written by a newer blockres?"), std::string::npos) << what;
  }
  // This build's version, and a file written before the attribute existed (the same layout), read.
  for (const auto& path : {write_tiny_jacobian("jacobian_v1", blockres::jacobian_layout_version),
                           write_tiny_jacobian("jacobian_unversioned", std::nullopt)}) {
    const auto m = read_jacobian(path.string());
    EXPECT_EQ(m.bs, 1) << path;
    EXPECT_EQ(m.values, std::vector<double>{2.0}) << path;
    std::filesystem::remove(path);
  }
  std::filesystem::remove(v99);
}
