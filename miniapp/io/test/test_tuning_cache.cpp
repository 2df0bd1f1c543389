// The per-device tuning cache on the CPU, with a fake device key and a fake configuration space: the key
// (every field refused by name when it differs), the default path (BLOCKRES_TUNING_DIR, XDG_CACHE_HOME,
// HOME), the round trip, the atomic write (a temporary of its own, renamed; a crash-left temporary never
// read; concurrent writers never tear the file), the fallbacks of a missing, stale, corrupt, foreign or
// unknown-configuration cache to the built-in rule with one line, `--tuning-cache none`, the selection of
// `blockres tune`, and what an executor records for result files and reports.
#include "miniapp/io/tuning_cache.hpp"

#include "miniapp/io/destination.hpp"
#include "miniapp/io/version.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace blockres;
namespace fs = std::filesystem;
using K = kernels::BsrmvKernel;

namespace {

const double nan_v = std::numeric_limits<double>::quiet_NaN();

fs::path fresh_dir(const std::string& tag)
{
  static int n = 0;
  const auto d = fs::temp_directory_path() /
                 ("blockres-tuning-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A configuration space of three configurations per block size (what a test binary "compiles").
const kernels::BsrmvConfig cfg_a{K::medium, 1, 1, 1, 1, 2, 8, true};
const kernels::BsrmvConfig cfg_b{K::wide, 4, 2, 1, 1, 1, 1, false};
const kernels::BsrmvConfig cfg_c{K::staged, 1, 2, 1, 1, 1, 64, false};
const kernels::BsrmvConfig not_compiled{K::large, 8, 2, 1, 4, 1, 1, false};

BsrmvSpace fake_space()
{
  return [](int bs) {
    return bs >= 1 && bs <= 64 ? std::vector<kernels::BsrmvConfig>{cfg_a, cfg_b, cfg_c}
                               : std::vector<kernels::BsrmvConfig>{};
  };
}

CudaDeviceIdentity fake_device()
{
  CudaDeviceIdentity id;
  id.name = "NVIDIA H100 80GB HBM3";
  id.multiprocessors = 132;
  id.cc_major = 9, id.cc_minor = 0;
  id.driver_version = 12040;
  return id;
}

TunedConfig tuned(const kernels::BsrmvConfig& c, double ms7, double ms27)
{
  return {c, ms7, ms27, 0.9, 0.85};
}

TuningRecord fake_record(const TuningKey& key)
{
  TuningRecord r;
  r.key = key;
  r.measured_utc = "2026-12-01T10:00:00Z";
  r.command_line = "blockres tune --bs 4,32";
  r.method = "test";
  r.size_gb = 0.5, r.reps = 10, r.warmup = 2, r.budget_s = 300, r.elapsed_s = 42.5;
  r.read_gbs = 3000, r.copy_gbs = 2900;
  TunedBlockSize b4;
  b4.bs = 4, b4.best = tuned(cfg_b, 0.20, 0.25), b4.runner_up = tuned(cfg_a, 0.21, 0.26);
  b4.rule = tuned(cfg_a, 0.21, 0.26), b4.configs_timed = 3;
  TunedBlockSize b32;
  b32.bs = 32, b32.best = tuned(cfg_c, 0.30, 0.31), b32.configs_timed = 3, b32.configs_wrong = 1;
  r.bsrmv = {b4, b32};
  r.not_measured = {64};
  return r;
}

void write_text(const fs::path& p, const std::string& text)
{
  std::ofstream f(p, std::ios::binary);
  f << text;
}

// The file's JSON with one edit, written to `p`.
template <class Edit>
void write_edited(const fs::path& p, const TuningRecord& r, Edit&& edit)
{
  Json j = tuning_record_json(r);
  edit(j);
  write_text(p, j.dump(2));
}

// Sets (or, with nullptr, unsets) an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name)
  {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// ---- the key -------------------------------------------------------------------------------------------

TEST(TuningKey, HoldsTheDeviceTheBinaryAndTheConfigurationSpace)
{
  const TuningKey k = make_tuning_key(fake_device(), fake_space());
  EXPECT_EQ(k.gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(k.sm_count, 132);
  EXPECT_EQ(k.compute_capability, "9.0");
  EXPECT_EQ(k.driver_version, 12040);
  EXPECT_TRUE(contains(k.blockres_version, version_string())) << k.blockres_version;
  EXPECT_TRUE(contains(k.blockres_version, git_commit())) << k.blockres_version;
  EXPECT_EQ(k.bsrmv_space, bsrmv_space_hash(fake_space()));
  EXPECT_EQ(k.bsrmv_space.size(), 16u);
  EXPECT_EQ(tuning_key_mismatch(k, k), "");
}

TEST(TuningKey, TheSpaceHashChangesWithTheCompiledConfigurations)
{
  const auto fewer = [](int bs) { return bs == 7 ? std::vector<kernels::BsrmvConfig>{cfg_a} : fake_space()(bs); };
  const auto other = [](int bs) {
    auto v = fake_space()(bs);
    if (bs == 64) v.back().unroll = 4;
    return v;
  };
  EXPECT_NE(bsrmv_space_hash(fake_space()), bsrmv_space_hash(fewer));
  EXPECT_NE(bsrmv_space_hash(fake_space()), bsrmv_space_hash(other));
  EXPECT_EQ(bsrmv_space_hash(fake_space()), bsrmv_space_hash(fake_space()));
}

TEST(TuningKey, EveryFieldThatDiffersIsNamed)
{
  const TuningKey here = make_tuning_key(fake_device(), fake_space());
  struct Case {
    const char* field;
    void (*edit)(TuningKey&);
  };
  const Case cases[] = {
      {"gpu", [](TuningKey& k) { k.gpu = "NVIDIA H200"; }},
      {"sm_count", [](TuningKey& k) { k.sm_count = 114; }},
      {"compute_capability", [](TuningKey& k) { k.compute_capability = "8.0"; }},
      {"driver_version", [](TuningKey& k) { k.driver_version = 12080; }},
      {"blockres_version", [](TuningKey& k) { k.blockres_version = "0.0.9 (git 000000000000)"; }},
      {"bsrmv_space", [](TuningKey& k) { k.bsrmv_space = "0000000000000000"; }},
  };
  for (const auto& c : cases) {
    TuningKey file = here;
    c.edit(file);
    const std::string why = tuning_key_mismatch(file, here);
    EXPECT_TRUE(why.starts_with(c.field)) << c.field << ": " << why;
    EXPECT_TRUE(contains(why, "in the file")) << why;
    EXPECT_NE(tuning_key_hash(file), tuning_key_hash(here)) << c.field;
  }
}

// ---- where ---------------------------------------------------------------------------------------------

TEST(TuningCachePath, FollowsBlockresTuningDirThenXdgCacheHomeThenHome)
{
  const TuningKey k = make_tuning_key(fake_device(), fake_space());
  const std::string file = "tuning-NVIDIA_H100_80GB_HBM3-" + tuning_key_hash(k) + ".json";
  {
    ScopedEnv a("BLOCKRES_TUNING_DIR", "/opt/tuning"), b("XDG_CACHE_HOME", "/xdg"), c("HOME", "/home/u");
    EXPECT_EQ(default_tuning_cache_path(k), "/opt/tuning/" + file);
  }
  {
    ScopedEnv a("BLOCKRES_TUNING_DIR", nullptr), b("XDG_CACHE_HOME", "/xdg"), c("HOME", "/home/u");
    EXPECT_EQ(default_tuning_cache_path(k), "/xdg/blockres/" + file);
  }
  {
    // An empty or relative XDG_CACHE_HOME is not one (the XDG spec): HOME's.
    ScopedEnv a("BLOCKRES_TUNING_DIR", ""), b("XDG_CACHE_HOME", "relative/cache"), c("HOME", "/home/u");
    EXPECT_EQ(default_tuning_cache_path(k), "/home/u/.cache/blockres/" + file);
  }
  {
    ScopedEnv a("BLOCKRES_TUNING_DIR", nullptr), b("XDG_CACHE_HOME", nullptr), c("HOME", nullptr);
    EXPECT_EQ(default_tuning_dir(), "");
    EXPECT_EQ(default_tuning_cache_path(k), "");
    const TuningLoad load = load_tuning_cache("", k, fake_space());
    EXPECT_EQ(load.status, TuningCacheStatus::missing);
    EXPECT_TRUE(contains(load.message, "no cache folder")) << load.message;
    EXPECT_EQ(load.tuning.source, KernelTuning::rule_source);
  }
  EXPECT_EQ(sanitized_gpu_name("NVIDIA A100-SXM4-40GB"), "NVIDIA_A100-SXM4-40GB");
  EXPECT_EQ(sanitized_gpu_name("a/b\\c d:e"), "a_b_c_d_e");
  EXPECT_EQ(sanitized_gpu_name(""), "gpu");
}

TEST(TuningCachePath, TheDefaultFileIsReadWhenNoneIsNamed)
{
  const auto dir = fresh_dir("default");
  ScopedEnv a("BLOCKRES_TUNING_DIR", dir.c_str());
  const TuningKey k = make_tuning_key(fake_device(), fake_space());
  const TuningLoad before = load_tuning_cache("", k, fake_space());
  EXPECT_EQ(before.status, TuningCacheStatus::missing);
  EXPECT_EQ(before.path, default_tuning_cache_path(k));
  // The one line: the GPU, the file looked for, the rule, and how to get a cache.
  EXPECT_TRUE(contains(before.message, "no tuning cache for NVIDIA H100 80GB HBM3")) << before.message;
  EXPECT_TRUE(contains(before.message, before.path)) << before.message;
  EXPECT_TRUE(contains(before.message, "built-in rule")) << before.message;
  EXPECT_TRUE(contains(before.message, "`blockres tune`")) << before.message;
  write_tuning_cache(default_tuning_cache_path(k), fake_record(k));
  const TuningLoad after = load_tuning_cache("", k, fake_space());
  EXPECT_EQ(after.status, TuningCacheStatus::loaded) << after.message;
  fs::remove_all(dir);
}

// ---- round trip and atomic write ------------------------------------------------------------------------

TEST(TuningCache, RoundTripGivesTheSameConfigurations)
{
  const auto dir = fresh_dir("round-trip");
  const auto path = (dir / "sub" / "cache.json").string();  // the folder is made
  const TuningKey k = make_tuning_key(fake_device(), fake_space());
  const TuningRecord r = fake_record(k);
  write_tuning_cache(path, r);
  const TuningLoad load = load_tuning_cache(path, k, fake_space());
  ASSERT_EQ(load.status, TuningCacheStatus::loaded) << load.message;
  EXPECT_EQ(load.path, path);
  EXPECT_EQ(load.tuning.bsrmv(4), cfg_b);
  EXPECT_EQ(load.tuning.bsrmv(32), cfg_c);
  EXPECT_FALSE(load.tuning.bsrmv(64).has_value()) << "not measured: the rule";
  EXPECT_FALSE(load.tuning.bsrmv(1).has_value());
  EXPECT_STREQ(load.tuning.bsrmv_origin(4), "measured");
  EXPECT_STREQ(load.tuning.bsrmv_origin(64), KernelTuning::rule_source);
  EXPECT_EQ(load.tuning.source, "tuning cache " + path + " (measured 2026-12-01T10:00:00Z)");
  EXPECT_TRUE(contains(load.message, load.tuning.source)) << load.message;
  EXPECT_TRUE(contains(load.message, "bs 64 not measured")) << load.message;
  EXPECT_EQ(load.details.size(), 2u);

  // Every recorded field reads back.
  const TuningRecord back = parse_tuning_record(read_json_file(path));
  EXPECT_EQ(tuning_key_mismatch(back.key, k), "");
  EXPECT_EQ(back.measured_utc, r.measured_utc);
  EXPECT_EQ(back.command_line, r.command_line);
  EXPECT_EQ(back.size_gb, r.size_gb);
  EXPECT_EQ(back.reps, r.reps);
  EXPECT_EQ(back.elapsed_s, r.elapsed_s);
  EXPECT_EQ(back.read_gbs, r.read_gbs);
  EXPECT_EQ(back.not_measured, r.not_measured);
  ASSERT_EQ(back.bsrmv.size(), 2u);
  EXPECT_EQ(back.bsrmv[0].bs, 4);
  EXPECT_EQ(back.bsrmv[0].best.config, cfg_b);
  EXPECT_EQ(back.bsrmv[0].best.stencil7_ms, 0.20);
  EXPECT_EQ(back.bsrmv[0].best.stencil27_ms, 0.25);
  ASSERT_TRUE(back.bsrmv[0].runner_up && back.bsrmv[0].rule);
  EXPECT_EQ(back.bsrmv[0].runner_up->config, cfg_a);
  EXPECT_EQ(back.bsrmv[0].rule->config, cfg_a);
  EXPECT_FALSE(back.bsrmv[1].runner_up.has_value());
  EXPECT_FALSE(back.bsrmv[1].rule.has_value());
  EXPECT_EQ(back.bsrmv[1].configs_wrong, 1);
  // The file states what tuning gained per block size, and each configuration in words too.
  const Json j = read_json_file(path);
  EXPECT_NEAR(j["bsrmv"][0]["rule_time_over_chosen"].get<double>(), 0.47 / 0.45, 1e-12);
  EXPECT_EQ(j["bsrmv"][0]["chosen"]["describe"], kernels::describe(cfg_b));
  fs::remove_all(dir);
}

TEST(TuningCache, TheWriteGoesThroughATemporaryOfItsOwnAndLeavesNone)
{
  const auto dir = fresh_dir("atomic");
  const auto path = (dir / "cache.json").string();
  const TuningKey k = make_tuning_key(fake_device(), fake_space());
  // A temporary left by a writer that crashed: never the cache, and in nobody's way.
  write_text(path + ".tmp", "{\"schema\": \"blockres-tuning-cache\", \"trunc");
  write_text(path + ".tmp.12345.0", "{\"schema\": \"blockres-tuning-cache\", \"trunc");
  EXPECT_EQ(load_tuning_cache(path, k, fake_space()).status, TuningCacheStatus::missing);
  write_tuning_cache(path, fake_record(k));
  EXPECT_EQ(load_tuning_cache(path, k, fake_space()).status, TuningCacheStatus::loaded);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    ++files;
    EXPECT_TRUE(name == "cache.json" || name == "cache.json.tmp" || name == "cache.json.tmp.12345.0")
        << "left behind: " << name;
  }
  EXPECT_EQ(files, 3);
  // A directory in the way: refused by name before any temporary exists.
  fs::create_directories(dir / "taken.json");
  EXPECT_THROW(write_tuning_cache((dir / "taken.json").string(), fake_record(k)), DestinationError);
  fs::remove_all(dir);
}

TEST(TuningCache, WritersAtOnceNeverTearTheFile)
{
  // Two `blockres tune` at once (here threads; the temporary's name holds the process id and a counter):
  // whatever a reader opens meanwhile is one complete cache or the other, never a mixture.
  const auto dir = fresh_dir("concurrent");
  const auto path = (dir / "cache.json").string();
  const TuningKey k = make_tuning_key(fake_device(), fake_space());
  TuningRecord r1 = fake_record(k), r2 = fake_record(k);
  r2.bsrmv[0].best.config = cfg_c;
  r2.command_line = std::string(20000, 'x');  // a larger file: a torn write would show
  write_tuning_cache(path, r1);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, reads{0};
  std::thread reader([&] {
    while (!stop) {
      const TuningLoad l = load_tuning_cache(path, k, fake_space());
      if (l.status != TuningCacheStatus::loaded) ++bad;
      else if (l.tuning.bsrmv(4) != cfg_b && l.tuning.bsrmv(4) != cfg_c) ++bad;
      ++reads;
    }
  });
  std::thread w1([&] {
    for (int i = 0; i < 200; ++i) write_tuning_cache(path, r1);
  });
  std::thread w2([&] {
    for (int i = 0; i < 200; ++i) write_tuning_cache(path, r2);
  });
  w1.join();
  w2.join();
  stop = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_GT(reads.load(), 0);
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1) << "temporaries left behind";
  fs::remove_all(dir);
}

// ---- fallbacks: one line each, then the rule ----------------------------------------------------------------

TEST(TuningCache, NoneMeansTheBuiltInRule)
{
  const TuningKey k = make_tuning_key(fake_device(), fake_space());
  const TuningLoad load = load_tuning_cache("none", k, fake_space());
  EXPECT_EQ(load.status, TuningCacheStatus::disabled);
  EXPECT_EQ(load.path, "");
  EXPECT_EQ(load.tuning.source, KernelTuning::rule_source);
  EXPECT_TRUE(load.tuning.bsrmv_measured.empty());
  EXPECT_EQ(load.message, "BSRMV: --tuning-cache none: built-in rule");
}

TEST(TuningCache, AMissingFileIsTheRuleWithOneLine)
{
  const auto dir = fresh_dir("missing");
  const auto path = (dir / "nothing.json").string();
  const TuningLoad load = load_tuning_cache(path, make_tuning_key(fake_device(), fake_space()), fake_space());
  EXPECT_EQ(load.status, TuningCacheStatus::missing);
  EXPECT_EQ(load.message.find('\n'), std::string::npos);
  EXPECT_TRUE(contains(load.message, path)) << load.message;
  EXPECT_TRUE(load.tuning.bsrmv_measured.empty());
  fs::remove_all(dir);
}

TEST(TuningCache, AForeignCacheIsStaleAndNamesTheField)
{
  const auto dir = fresh_dir("stale");
  const auto path = (dir / "cache.json").string();
  const TuningKey here = make_tuning_key(fake_device(), fake_space());
  // Measured on an H200 (another name and SM count: the first field that differs is named), and with
  // another driver.
  TuningKey h200 = here;
  h200.gpu = "NVIDIA H200", h200.sm_count = 132;
  write_tuning_cache(path, fake_record(h200));
  TuningLoad load = load_tuning_cache(path, here, fake_space());
  EXPECT_EQ(load.status, TuningCacheStatus::stale);
  EXPECT_TRUE(contains(load.message, "stale (gpu: \"NVIDIA H200\" in the file, \"NVIDIA H100 80GB HBM3\" here)"))
      << load.message;
  EXPECT_TRUE(contains(load.message, path)) << load.message;
  EXPECT_TRUE(contains(load.message, "built-in rule")) << load.message;
  EXPECT_TRUE(load.tuning.bsrmv_measured.empty());
  EXPECT_EQ(load.tuning.source, KernelTuning::rule_source);

  TuningKey driver = here;
  driver.driver_version = 12020;
  write_tuning_cache(path, fake_record(driver));
  load = load_tuning_cache(path, here, fake_space());
  EXPECT_EQ(load.status, TuningCacheStatus::stale);
  EXPECT_TRUE(contains(load.message, "driver_version: 12020 in the file, 12040 here")) << load.message;

  // Another binary's kernel set: the space hash differs.
  TuningKey space = here;
  space.bsrmv_space = bsrmv_space_hash([](int) { return std::vector<kernels::BsrmvConfig>{cfg_a}; });
  write_tuning_cache(path, fake_record(space));
  load = load_tuning_cache(path, here, fake_space());
  EXPECT_EQ(load.status, TuningCacheStatus::stale);
  EXPECT_TRUE(contains(load.message, "bsrmv_space")) << load.message;
  fs::remove_all(dir);
}

TEST(TuningCache, ACorruptFileIsTheRuleWithOneLineNamingTheFileAndWhat)
{
  const auto dir = fresh_dir("corrupt");
  const auto path = (dir / "cache.json").string();
  const TuningKey k = make_tuning_key(fake_device(), fake_space());
  const TuningRecord r = fake_record(k);
  struct Case {
    std::string what;           // expected in the message
    std::function<void()> make;  // writes the file
  };
  const std::vector<Case> cases = {
      {"not valid JSON", [&] { write_text(path, "{\"schema\": \"blockres-tuning-cache\", \"key\": {"); }},
      {"not valid JSON", [&] { write_text(path, ""); }},
      {"holds no JSON object", [&] { write_text(path, "[1, 2, 3]"); }},
      {"'schema' is \"something-else\"",
       [&] { write_edited(path, r, [](Json& j) { j["schema"] = "something-else"; }); }},
      {"'schema' is missing", [&] { write_edited(path, r, [](Json& j) { j.erase("schema"); }); }},
      {"'schema_version' is 2, this blockres reads 1",
       [&] { write_edited(path, r, [](Json& j) { j["schema_version"] = 2; }); }},
      {"'key.driver_version' is missing", [&] { write_edited(path, r, [](Json& j) { j["key"].erase("driver_version"); }); }},
      {"'key.sm_count' is not an integer", [&] { write_edited(path, r, [](Json& j) { j["key"]["sm_count"] = "132"; }); }},
      {"'bsrmv' is not an array", [&] { write_edited(path, r, [](Json& j) { j["bsrmv"] = 4; }); }},
      {"'bsrmv[1].block_size' is 65, not in 1..64",
       [&] { write_edited(path, r, [](Json& j) { j["bsrmv"][1]["block_size"] = 65; }); }},
      {"block size 4 appears twice", [&] { write_edited(path, r, [](Json& j) { j["bsrmv"][1]["block_size"] = 4; }); }},
      {"'bsrmv[0].chosen.config.kernel' is \"huge\", not a BSRMV kernel",
       [&] { write_edited(path, r, [](Json& j) { j["bsrmv"][0]["chosen"]["config"]["kernel"] = "huge"; }); }},
      {"'bsrmv[0].chosen.config.clamped' is not true or false",
       [&] { write_edited(path, r, [](Json& j) { j["bsrmv"][0]["chosen"]["config"]["clamped"] = 1; }); }},
      {"'bsrmv[1].chosen' is missing", [&] { write_edited(path, r, [](Json& j) { j["bsrmv"][1].erase("chosen"); }); }},
      // Well-formed, the key matches, but a configuration that this binary does not compile.
      {"bs 32: large(warps=8, unroll=2, row_split=4) is not a configuration this blockres compiles", [&] {
         TuningRecord bad = r;
         bad.bsrmv[1].best.config = not_compiled;
         write_tuning_cache(path, bad);
       }},
  };
  for (const auto& c : cases) {
    c.make();
    const TuningLoad load = load_tuning_cache(path, k, fake_space());
    EXPECT_EQ(load.status, TuningCacheStatus::corrupt) << c.what << ": " << load.message;
    EXPECT_TRUE(contains(load.message, c.what)) << "expected \"" << c.what << "\" in: " << load.message;
    EXPECT_TRUE(contains(load.message, path)) << load.message;
    EXPECT_TRUE(contains(load.message, "built-in rule")) << load.message;
    EXPECT_EQ(load.message.find('\n'), std::string::npos) << "one line: " << load.message;
    EXPECT_TRUE(load.tuning.bsrmv_measured.empty()) << c.what;
    EXPECT_EQ(load.tuning.source, KernelTuning::rule_source);
  }
  fs::remove_all(dir);
}

// ---- the selection of `blockres tune` -----------------------------------------------------------------------

TEST(TuningChoice, TheSmallestSumOfBothStencilsAmongVerifiedConfigurations)
{
  auto m = [](const kernels::BsrmvConfig& c, double ms7, double ms27, double err7 = 0, double err27 = 0) {
    BsrmvMeasurement x;
    x.config = c, x.stencil7_ms = ms7, x.stencil27_ms = ms27, x.stencil7_error = err7, x.stencil27_error = err27;
    x.stencil7_read_fraction = 0.9, x.stencil27_read_fraction = 0.8;
    return x;
  };
  // cfg_b is the fastest on the 7-point stencil alone, cfg_c by the sum.
  const auto choice = choose_bsrmv_config(8, {m(cfg_a, 1.0, 1.0), m(cfg_b, 0.5, 1.4), m(cfg_c, 0.8, 1.0)}, cfg_a);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->bs, 8);
  EXPECT_EQ(choice->best.config, cfg_c);
  EXPECT_DOUBLE_EQ(choice->best.sum_ms(), 1.8);
  ASSERT_TRUE(choice->runner_up);
  EXPECT_EQ(choice->runner_up->config, cfg_b);
  ASSERT_TRUE(choice->rule);
  EXPECT_EQ(choice->rule->config, cfg_a);
  EXPECT_DOUBLE_EQ(choice->rule->sum_ms(), 2.0);
  EXPECT_EQ(choice->configs_timed, 3);
  EXPECT_EQ(choice->configs_wrong, 0);

  // A wrong result is never chosen, however fast: on either stencil, NaN included.
  const auto wrong = choose_bsrmv_config(
      8, {m(cfg_a, 1.0, 1.0), m(cfg_b, 0.1, 0.1, 1e-3, 0), m(cfg_c, 0.2, 0.2, 0, nan_v)}, cfg_b);
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->best.config, cfg_a);
  EXPECT_FALSE(wrong->runner_up.has_value());
  EXPECT_FALSE(wrong->rule.has_value()) << "the rule's configuration did not verify";
  EXPECT_EQ(wrong->configs_wrong, 2);
  // A non-finite time is not a measurement.
  EXPECT_EQ(choose_bsrmv_config(8, {m(cfg_a, 1.0, 1.0), m(cfg_b, nan_v, 0.1)}, cfg_a)->best.config, cfg_a);
  // Nothing verified: nothing to choose.
  EXPECT_FALSE(choose_bsrmv_config(8, {m(cfg_a, 1.0, 1.0, 1.0, 1.0)}, cfg_a).has_value());
  EXPECT_FALSE(choose_bsrmv_config(8, {}, cfg_a).has_value());
}

// ---- what runs and reports record -------------------------------------------------------------------------------

TEST(TuningRecordOfARun, PlansAreDescribedWithTheirOrigin)
{
  KernelTuning t;
  t.bsrmv_measured[3] = cfg_a;
  const std::multimap<int, kernels::BsrmvConfig> plans = {{1, cfg_c}, {3, cfg_a}};
  EXPECT_EQ(describe_bsrmv_plans(plans, t), "bs 1: " + kernels::describe(cfg_c) + " [built-in rule]; bs 3: " +
                                                kernels::describe(cfg_a) + " [measured]");
  // The rule can plan two matrices of one block size differently (by their row lengths): both listed.
  const std::multimap<int, kernels::BsrmvConfig> two = {{1, cfg_c}, {1, cfg_b}, {3, cfg_a}};
  EXPECT_EQ(describe_bsrmv_plans(two, t), "bs 1: " + kernels::describe(cfg_c) + " [built-in rule]; bs 1: " +
                                              kernels::describe(cfg_b) + " [built-in rule]; bs 3: " +
                                              kernels::describe(cfg_a) + " [measured]");
  EXPECT_EQ(describe_bsrmv_plans({}, t), "none");
  // The CPU backend has no configurations: reports say so.
  const auto cpu = Executor::create_cpu();
  EXPECT_EQ(cpu->tuning().source, KernelTuning::rule_source);
  Json j;
  write_tuning_json(j, *cpu);
  EXPECT_EQ(j["tuning_source"], "none (CPU backend: the reference SpMV)");
  EXPECT_EQ(j["bsrmv_configs"], "none (CPU backend: the reference SpMV)");
  EXPECT_EQ(cpu->dram_gbps_per_sm(), 0.0);
  EXPECT_TRUE(j["bsrmv_rule_dram_gb_per_s_per_sm"].is_null());
  // The executor's record: a block size once per distinct configuration, in the order planned.
  EXPECT_TRUE(cpu->bsrmv_plans().empty());
  cpu->record_bsrmv_plan(5, cfg_b);
  cpu->record_bsrmv_plan(5, cfg_a);
  cpu->record_bsrmv_plan(5, cfg_b);
  cpu->record_bsrmv_plan(2, cfg_c);
  EXPECT_EQ(describe_bsrmv_plans(cpu->bsrmv_plans(), KernelTuning{}),
            "bs 2: " + kernels::describe(cfg_c) + " [built-in rule]; bs 5: " + kernels::describe(cfg_b) +
                " [built-in rule]; bs 5: " + kernels::describe(cfg_a) + " [built-in rule]");
}

// The log line of a load that leaves block sizes to the rule carries the rule's device key; a line
// without the rule, or an unknown key, is left as it is.
TEST(TuningRecordOfARun, TheRulesLineCarriesItsBandwidthKey)
{
  EXPECT_EQ(with_rule_key("BSRMV: --tuning-cache none: built-in rule", 36.36),
            "BSRMV: --tuning-cache none: built-in rule, DRAM 36.4 GB/s per SM");
  EXPECT_EQ(with_rule_key("BSRMV: no tuning cache for X (/c/t.json): built-in rule; `blockres tune` measures one", 25.4),
            "BSRMV: no tuning cache for X (/c/t.json): built-in rule, DRAM 25.4 GB/s per SM; `blockres tune` measures one");
  const std::string loaded = "BSRMV: tuning cache /c/t.json (measured 2026-11-27T00:00:00Z): 64 block size(s) measured";
  EXPECT_EQ(with_rule_key(loaded, 25.4), loaded);
  EXPECT_EQ(with_rule_key("BSRMV: --tuning-cache none: built-in rule", 0.0), "BSRMV: --tuning-cache none: built-in rule");
  // Every line load_tuning_cache gives for the rule names it so that the key finds its place.
  const TuningKey k = make_tuning_key(fake_device(), fake_space());
  const TuningLoad none = load_tuning_cache("none", k, fake_space());
  EXPECT_NE(with_rule_key(none.message, 30.5), none.message);
  const TuningLoad missing = load_tuning_cache("/nonexistent/blockres/tuning.json", k, fake_space());
  EXPECT_EQ(missing.status, TuningCacheStatus::missing);
  EXPECT_NE(with_rule_key(missing.message, 30.5).find("built-in rule, DRAM 30.5 GB/s per SM; "), std::string::npos)
      << missing.message;
}
