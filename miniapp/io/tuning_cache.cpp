// The per-device tuning cache (see tuning_cache.hpp): key, default path, JSON schema, atomic write, and the
// load that falls back to the built-in rule with one line.
#include "miniapp/io/tuning_cache.hpp"

#include "miniapp/io/destination.hpp"
#include "miniapp/io/version.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

namespace blockres {

namespace {

std::uint64_t fnv1a(std::string_view text, std::uint64_t h = 0xcbf29ce484222325ULL)
{
  for (const unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// ---- configurations as JSON -----------------------------------------------------------------------

constexpr kernels::BsrmvKernel all_kernels[] = {kernels::BsrmvKernel::small, kernels::BsrmvKernel::medium,
                                                kernels::BsrmvKernel::wide, kernels::BsrmvKernel::large,
                                                kernels::BsrmvKernel::staged};

Json config_json(const kernels::BsrmvConfig& c)
{
  return {{"kernel", std::string(kernels::to_string(c.kernel))},
          {"warps", c.warps},
          {"unroll", c.unroll},
          {"rows_per_warp", c.rows_per_warp},
          {"row_split", c.row_split},
          {"groups", c.groups},
          {"arrays", c.arrays},
          {"clamped", c.clamped}};
}

Json tuned_json(const TunedConfig& t)
{
  return {{"config", config_json(t.config)},
          {"describe", kernels::describe(t.config)},
          {"stencil7_ms", t.stencil7_ms},
          {"stencil27_ms", t.stencil27_ms},
          {"sum_ms", t.sum_ms()},
          {"stencil7_fraction_of_read", t.stencil7_read_fraction},
          {"stencil27_fraction_of_read", t.stencil27_read_fraction}};
}

// The checked reads: a missing field or one of the wrong type names its path ("bsrmv[3].config.warps").
const Json& member(const Json& j, const char* name, const std::string& where)
{
  if (!j.is_object()) throw TuningCacheError(fmt::format("'{}' is not an object", where.empty() ? "(top)" : where));
  const auto it = j.find(name);
  if (it == j.end()) throw TuningCacheError(fmt::format("'{}{}{}' is missing", where, where.empty() ? "" : ".", name));
  return *it;
}

std::string path_of(const std::string& where, const char* name)
{
  return where.empty() ? std::string(name) : where + "." + name;
}

std::string get_string(const Json& j, const char* name, const std::string& where)
{
  const Json& v = member(j, name, where);
  if (!v.is_string()) throw TuningCacheError(fmt::format("'{}' is not a string", path_of(where, name)));
  return v.get<std::string>();
}

int get_int(const Json& j, const char* name, const std::string& where)
{
  const Json& v = member(j, name, where);
  if (!v.is_number_integer()) throw TuningCacheError(fmt::format("'{}' is not an integer", path_of(where, name)));
  const auto x = v.get<long long>();
  if (x < -2147483647LL || x > 2147483647LL)
    throw TuningCacheError(fmt::format("'{}' is out of range", path_of(where, name)));
  return static_cast<int>(x);
}

double get_number(const Json& j, const char* name, const std::string& where)
{
  const Json& v = member(j, name, where);
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();  // a non-finite number is written as null
  if (!v.is_number()) throw TuningCacheError(fmt::format("'{}' is not a number", path_of(where, name)));
  return v.get<double>();
}

bool get_bool(const Json& j, const char* name, const std::string& where)
{
  const Json& v = member(j, name, where);
  if (!v.is_boolean()) throw TuningCacheError(fmt::format("'{}' is not true or false", path_of(where, name)));
  return v.get<bool>();
}

kernels::BsrmvConfig parse_config(const Json& j, const std::string& where)
{
  kernels::BsrmvConfig c;
  const std::string kernel = get_string(j, "kernel", where);
  const auto k = std::find_if(std::begin(all_kernels), std::end(all_kernels),
                              [&](kernels::BsrmvKernel x) { return kernels::to_string(x) == kernel; });
  if (k == std::end(all_kernels))
    throw TuningCacheError(fmt::format("'{}.kernel' is \"{}\", not a BSRMV kernel (small, medium, wide, large, staged)",
                                       where, kernel));
  c.kernel = *k;
  c.warps = get_int(j, "warps", where);
  c.unroll = get_int(j, "unroll", where);
  c.rows_per_warp = get_int(j, "rows_per_warp", where);
  c.row_split = get_int(j, "row_split", where);
  c.groups = get_int(j, "groups", where);
  c.arrays = get_int(j, "arrays", where);
  c.clamped = get_bool(j, "clamped", where);
  return c;
}

TunedConfig parse_tuned(const Json& j, const std::string& where)
{
  TunedConfig t;
  t.config = parse_config(member(j, "config", where), path_of(where, "config"));
  t.stencil7_ms = get_number(j, "stencil7_ms", where);
  t.stencil27_ms = get_number(j, "stencil27_ms", where);
  t.stencil7_read_fraction = get_number(j, "stencil7_fraction_of_read", where);
  t.stencil27_read_fraction = get_number(j, "stencil27_fraction_of_read", where);
  return t;
}

std::optional<TunedConfig> parse_optional_tuned(const Json& j, const char* name, const std::string& where)
{
  const Json& v = member(j, name, where);
  if (v.is_null()) return std::nullopt;
  return parse_tuned(v, path_of(where, name));
}

std::string rule_hint()
{
  return fmt::format("`blockres tune` measures one in at most {:.0f} s", tune_default_budget_s);
}

}  // namespace

// ---- key --------------------------------------------------------------------------------------------

BsrmvSpace compiled_bsrmv_space()
{
#if BLOCKRES_HAVE_CUDA
  return [](int bs) { return kernels::cuda::bsrmv_configs(bs); };
#else
  return [](int) { return std::vector<kernels::BsrmvConfig>{}; };
#endif
}

std::string bsrmv_space_hash(const BsrmvSpace& space)
{
  std::uint64_t h = fnv1a("bsrmv");
  for (int bs = 1; bs <= 64; ++bs) {
    h = fnv1a(fmt::format("|bs {}:", bs), h);
    for (const auto& c : space(bs)) h = fnv1a(kernels::describe(c) + ";", h);
  }
  return fmt::format("{:016x}", h);
}

TuningKey make_tuning_key(const CudaDeviceIdentity& id, const BsrmvSpace& space)
{
  TuningKey k;
  k.gpu = id.name;
  k.sm_count = id.multiprocessors;
  k.compute_capability = fmt::format("{}.{}", id.cc_major, id.cc_minor);
  k.driver_version = id.driver_version;
  k.blockres_version = fmt::format("{} (git {})", version_string(), git_commit());
  k.bsrmv_space = bsrmv_space_hash(space);
  return k;
}

std::string tuning_key_mismatch(const TuningKey& file, const TuningKey& here)
{
  auto differ = [](const char* field, const auto& a, const auto& b) {
    return fmt::format("{}: {} in the file, {} here", field, a, b);
  };
  auto quoted = [](const std::string& s) { return fmt::format("\"{}\"", s); };
  if (file.gpu != here.gpu) return differ("gpu", quoted(file.gpu), quoted(here.gpu));
  if (file.sm_count != here.sm_count) return differ("sm_count", file.sm_count, here.sm_count);
  if (file.compute_capability != here.compute_capability)
    return differ("compute_capability", file.compute_capability, here.compute_capability);
  if (file.driver_version != here.driver_version) return differ("driver_version", file.driver_version, here.driver_version);
  if (file.blockres_version != here.blockres_version)
    return differ("blockres_version", quoted(file.blockres_version), quoted(here.blockres_version));
  if (file.bsrmv_space != here.bsrmv_space)
    return differ("bsrmv_space (the compiled BSRMV configurations)", file.bsrmv_space, here.bsrmv_space);
  return {};
}

std::string tuning_key_hash(const TuningKey& k)
{
  const std::string text = fmt::format("{}\n{}\n{}\n{}\n{}\n{}", k.gpu, k.sm_count, k.compute_capability,
                                       k.driver_version, k.blockres_version, k.bsrmv_space);
  return fmt::format("{:08x}", static_cast<std::uint32_t>(fnv1a(text) >> 32));
}

// ---- where --------------------------------------------------------------------------------------------

std::string default_tuning_dir()
{
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  };
  if (const std::string d = env("BLOCKRES_TUNING_DIR"); !d.empty()) return d;
  // The XDG spec: a relative XDG_CACHE_HOME is invalid and ignored.
  if (const std::string x = env("XDG_CACHE_HOME"); !x.empty() && x.front() == '/') return x + "/blockres";
  if (const std::string h = env("HOME"); !h.empty()) return h + "/.cache/blockres";
  return {};
}

std::string sanitized_gpu_name(std::string_view gpu)
{
  std::string s;
  for (const char c : gpu) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    s += keep ? c : '_';
  }
  return s.empty() ? std::string("gpu") : s;
}

std::string default_tuning_cache_path(const TuningKey& key)
{
  const std::string dir = default_tuning_dir();
  if (dir.empty()) return {};
  return (std::filesystem::path(dir) /
          fmt::format("tuning-{}-{}.json", sanitized_gpu_name(key.gpu), tuning_key_hash(key)))
      .string();
}

// ---- the selection ------------------------------------------------------------------------------------

bool BsrmvMeasurement::verified(double tol) const
{
  // NaN errors or times fail every comparison: not verified.
  return stencil7_error <= tol && stencil27_error <= tol && std::isfinite(stencil7_ms) && std::isfinite(stencil27_ms);
}

std::optional<TunedBlockSize> choose_bsrmv_config(int bs, const std::vector<BsrmvMeasurement>& measured,
                                                  const kernels::BsrmvConfig& rule, double tol)
{
  auto tuned = [](const BsrmvMeasurement& m) {
    return TunedConfig{m.config, m.stencil7_ms, m.stencil27_ms, m.stencil7_read_fraction, m.stencil27_read_fraction};
  };
  std::vector<const BsrmvMeasurement*> ok;
  for (const auto& m : measured)
    if (m.verified(tol)) ok.push_back(&m);
  if (ok.empty()) return std::nullopt;
  std::stable_sort(ok.begin(), ok.end(), [&](const BsrmvMeasurement* a, const BsrmvMeasurement* b) {
    return a->stencil7_ms + a->stencil27_ms < b->stencil7_ms + b->stencil27_ms;
  });
  TunedBlockSize b;
  b.bs = bs;
  b.best = tuned(*ok[0]);
  if (ok.size() > 1) b.runner_up = tuned(*ok[1]);
  for (const auto* m : ok)
    if (m->config == rule) b.rule = tuned(*m);
  b.configs_timed = static_cast<int>(measured.size());
  b.configs_wrong = static_cast<int>(measured.size() - ok.size());
  return b;
}

// ---- the file -------------------------------------------------------------------------------------------

Json tuning_record_json(const TuningRecord& r)
{
  Json j;
  j["schema"] = tuning_cache_schema;
  j["schema_version"] = tuning_cache_schema_version;
  j["key"] = {{"gpu", r.key.gpu},
              {"sm_count", r.key.sm_count},
              {"compute_capability", r.key.compute_capability},
              {"driver_version", r.key.driver_version},
              {"blockres_version", r.key.blockres_version},
              {"bsrmv_space", r.key.bsrmv_space}};
  j["measured_utc"] = r.measured_utc;
  j["command_line"] = r.command_line;
  j["method"] = r.method;
  j["size_gb"] = r.size_gb;
  j["reps"] = r.reps;
  j["warmup"] = r.warmup;
  j["budget_s"] = r.budget_s;
  j["elapsed_s"] = r.elapsed_s;
  j["read_bandwidth_gb_per_s"] = r.read_gbs;
  j["copy_bandwidth_gb_per_s"] = r.copy_gbs;
  Json& list = j["bsrmv"] = Json::array();
  for (const auto& b : r.bsrmv) {
    Json e;
    e["block_size"] = b.bs;
    e["chosen"] = tuned_json(b.best);
    e["runner_up"] = b.runner_up ? tuned_json(*b.runner_up) : Json(nullptr);
    e["rule"] = b.rule ? tuned_json(*b.rule) : Json(nullptr);
    // How much tuning gained over the built-in rule at this block size (sum of both stencils' times).
    e["rule_time_over_chosen"] = b.rule ? Json(b.rule->sum_ms() / b.best.sum_ms()) : Json(nullptr);
    e["configs_timed"] = b.configs_timed;
    e["configs_wrong"] = b.configs_wrong;
    list.push_back(std::move(e));
  }
  j["not_measured"] = r.not_measured;
  return j;
}

TuningRecord parse_tuning_record(const Json& j)
{
  TuningRecord r;
  if (!j.is_object()) throw TuningCacheError("the file holds no JSON object");
  if (const std::string schema = get_string(j, "schema", ""); schema != tuning_cache_schema)
    throw TuningCacheError(fmt::format("'schema' is \"{}\", not \"{}\"", schema, tuning_cache_schema));
  if (const int v = get_int(j, "schema_version", ""); v != tuning_cache_schema_version)
    throw TuningCacheError(
        fmt::format("'schema_version' is {}, this blockres reads {}", v, tuning_cache_schema_version));
  const Json& key = member(j, "key", "");
  r.key.gpu = get_string(key, "gpu", "key");
  r.key.sm_count = get_int(key, "sm_count", "key");
  r.key.compute_capability = get_string(key, "compute_capability", "key");
  r.key.driver_version = get_int(key, "driver_version", "key");
  r.key.blockres_version = get_string(key, "blockres_version", "key");
  r.key.bsrmv_space = get_string(key, "bsrmv_space", "key");
  r.measured_utc = get_string(j, "measured_utc", "");
  r.command_line = get_string(j, "command_line", "");
  r.method = get_string(j, "method", "");
  r.size_gb = get_number(j, "size_gb", "");
  r.reps = get_int(j, "reps", "");
  r.warmup = get_int(j, "warmup", "");
  r.budget_s = get_number(j, "budget_s", "");
  r.elapsed_s = get_number(j, "elapsed_s", "");
  r.read_gbs = get_number(j, "read_bandwidth_gb_per_s", "");
  r.copy_gbs = get_number(j, "copy_bandwidth_gb_per_s", "");
  const Json& list = member(j, "bsrmv", "");
  if (!list.is_array()) throw TuningCacheError("'bsrmv' is not an array");
  std::set<int> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = fmt::format("bsrmv[{}]", i);
    TunedBlockSize b;
    b.bs = get_int(list[i], "block_size", where);
    if (b.bs < 1 || b.bs > 64)
      throw TuningCacheError(fmt::format("'{}.block_size' is {}, not in 1..64", where, b.bs));
    if (!seen.insert(b.bs).second)
      throw TuningCacheError(fmt::format("'{}': block size {} appears twice", where, b.bs));
    b.best = parse_tuned(member(list[i], "chosen", where), where + ".chosen");
    b.runner_up = parse_optional_tuned(list[i], "runner_up", where);
    b.rule = parse_optional_tuned(list[i], "rule", where);
    b.configs_timed = get_int(list[i], "configs_timed", where);
    b.configs_wrong = get_int(list[i], "configs_wrong", where);
    r.bsrmv.push_back(b);
  }
  const Json& left = member(j, "not_measured", "");
  if (!left.is_array()) throw TuningCacheError("'not_measured' is not an array");
  for (const auto& v : left) {
    if (!v.is_number_integer()) throw TuningCacheError("'not_measured' holds something other than block sizes");
    r.not_measured.push_back(v.get<int>());
  }
  return r;
}

void write_tuning_cache(const std::string& path, const TuningRecord& r)
{
  namespace fs = std::filesystem;
  check_file_destination(path, "--tuning-cache", true);
  std::error_code ec;
  if (const fs::path parent = fs::path(path).parent_path(); !parent.empty()) fs::create_directories(parent, ec);
  // A temporary of this process's own (json_file's write_file_atomically uses one fixed `path`.tmp, which two
  // writers of the same file at once would both write into): the last rename wins, each a complete file.
  static std::atomic<unsigned> counter{0};
  const std::string tmp = fmt::format("{}.tmp.{}.{}", path, static_cast<long>(::getpid()), counter++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << tuning_record_json(r).dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
    f.close();
    if (!f) {
      fs::remove(tmp, ec);
      throw std::runtime_error(fmt::format("cannot write the tuning cache '{}' (temporary '{}')", path, tmp));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error(fmt::format("cannot rename '{}' to '{}': {}", tmp, path, ec.message()));
  }
}

// ---- the run's load -------------------------------------------------------------------------------------

TuningLoad load_tuning_cache(const std::string& option, const TuningKey& key, const BsrmvSpace& space)
{
  TuningLoad out;
  const auto fallback = [&](TuningCacheStatus status, std::string message) {
    out.status = status;
    out.tuning = KernelTuning{};
    out.message = std::move(message);
    return out;
  };
  if (option == "none") return fallback(TuningCacheStatus::disabled, "BSRMV: --tuning-cache none: built-in rule");
  out.path = option.empty() ? default_tuning_cache_path(key) : option;
  if (out.path.empty())
    return fallback(TuningCacheStatus::missing,
                    fmt::format("BSRMV: no tuning cache for {} (no cache folder: BLOCKRES_TUNING_DIR, XDG_CACHE_HOME and "
                                "HOME are unset): built-in rule; {} (with --tuning-cache FILE)",
                                key.gpu, rule_hint()));
  std::error_code ec;
  if (!std::filesystem::exists(out.path, ec))
    return fallback(TuningCacheStatus::missing, fmt::format("BSRMV: no tuning cache for {} ({}): built-in rule; {}",
                                                            key.gpu, out.path, rule_hint()));
  TuningRecord r;
  try {
    std::ifstream f(out.path, std::ios::binary);
    if (!f) throw TuningCacheError("cannot be read");
    Json j;
    try {
      j = Json::parse(f);
    } catch (const Json::parse_error& e) {
      throw TuningCacheError(fmt::format("not valid JSON: {}", e.what()));
    }
    r = parse_tuning_record(j);
  } catch (const TuningCacheError& e) {
    return fallback(TuningCacheStatus::corrupt,
                    fmt::format("BSRMV: tuning cache {} is unusable ({}): built-in rule; {} anew", out.path, e.what(),
                                rule_hint()));
  }
  if (const std::string why = tuning_key_mismatch(r.key, key); !why.empty())
    return fallback(TuningCacheStatus::stale,
                    fmt::format("BSRMV: tuning cache {} is stale ({}): built-in rule; {} for this setup", out.path, why,
                                rule_hint()));
  // The key's space hash matched; still, a configuration this binary cannot launch is never taken.
  KernelTuning t;
  for (const auto& b : r.bsrmv) {
    const auto configs = space(b.bs);
    if (std::find(configs.begin(), configs.end(), b.best.config) == configs.end())
      return fallback(TuningCacheStatus::corrupt,
                      fmt::format("BSRMV: tuning cache {} is unusable (bs {}: {} is not a configuration this blockres "
                                  "compiles): built-in rule; {} anew",
                                  out.path, b.bs, kernels::describe(b.best.config), rule_hint()));
    t.bsrmv_measured[b.bs] = b.best.config;
    out.details.push_back(fmt::format(
        "BSRMV bs {}: {} ({:.4f} + {:.4f} ms on the 7- and 27-point stencils{})", b.bs, kernels::describe(b.best.config),
        b.best.stencil7_ms, b.best.stencil27_ms,
        b.rule ? fmt::format("; the built-in rule takes {:.2f}x as long", b.rule->sum_ms() / b.best.sum_ms()) : std::string()));
  }
  t.source = fmt::format("tuning cache {} (measured {})", out.path, r.measured_utc);
  out.status = TuningCacheStatus::loaded;
  out.tuning = std::move(t);
  std::string rule_sizes;
  if (!r.not_measured.empty())
    rule_sizes = fmt::format("; bs {} not measured (the tuning's budget ran out): built-in rule",
                             fmt::join(r.not_measured, ","));
  out.message = fmt::format("BSRMV: {}: {} block size(s) measured{}", out.tuning.source, r.bsrmv.size(), rule_sizes);
  return out;
}

std::string with_rule_key(std::string message, double dram_gbps_per_sm)
{
  constexpr std::string_view rule = ": built-in rule";
  const auto at = message.rfind(rule);
  if (at == std::string::npos || !(dram_gbps_per_sm > 0)) return message;
  message.insert(at + rule.size(), fmt::format(", DRAM {:.1f} GB/s per SM", dram_gbps_per_sm));
  return message;
}

void write_tuning_json(Json& j, const Executor& e)
{
  const char* cpu = "none (CPU backend: the reference SpMV)";
  j["tuning_source"] = e.is_cuda() ? e.tuning().source : cpu;
  j["bsrmv_configs"] = e.is_cuda() ? describe_bsrmv_plans(e.bsrmv_plans(), e.tuning()) : cpu;
  j["bsrmv_rule_dram_gb_per_s_per_sm"] = e.dram_gbps_per_sm() > 0 ? Json(e.dram_gbps_per_sm()) : Json(nullptr);
}

}  // namespace blockres
