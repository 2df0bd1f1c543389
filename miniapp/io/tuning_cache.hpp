// The per-device tuning cache: a JSON file that `blockres tune` writes and every run and bench reads,
// keyed by the device and the binary; missing, stale or corrupt caches fall back to the built-in rule.
//
// What is in the file: the key (GPU name, SM count, compute capability, driver version, blockres version
// and a hash of the compiled BSRMV configuration space: every field must match, else the cache is
// stale), the date and command line of the measurement, the read-only ceiling measured with it, and per
// block size the chosen BSRMV configuration (as fields and as describe() text) with its times on the 3D
// 7- and 27-point stencils, its fraction of the read-only stream, the runner-up and the built-in rule's
// configuration and time. Everything here is plain C++ (no device): the device's identity comes in as a
// CudaDeviceIdentity and the configuration space as a function, so the tests give fake ones.
#pragma once

#include "kernels/spmv/bsrmv.hpp"
#include "linalg/executor.hpp"
#include "linalg/kernel_tuning.hpp"
#include "miniapp/io/json_file.hpp"

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace blockres {

inline constexpr const char* tuning_cache_schema = "blockres-tuning-cache";
inline constexpr int tuning_cache_schema_version = 1;
// `blockres tune`'s default time budget, which the "no tuning cache" line quotes.
inline constexpr double tune_default_budget_s = 300;

// The BSRMV configurations compiled for a block size (kernels::cuda::bsrmv_configs in a CUDA build).
using BsrmvSpace = std::function<std::vector<kernels::BsrmvConfig>(int bs)>;
// This binary's space: kernels::cuda::bsrmv_configs with CUDA; without, no configuration at all.
BsrmvSpace compiled_bsrmv_space();
// 16 hex digits (FNV-1a) over every configuration of block sizes 1..64: a cache measured by a binary
// that compiled another set of configurations has another hash, and is refused as stale.
std::string bsrmv_space_hash(const BsrmvSpace& space);

// Everything a measurement depends on; a cache is used only when every field equals this binary's on
// this device.
struct TuningKey {
  std::string gpu;                 // device name
  int sm_count = 0;                // multiprocessors
  std::string compute_capability;  // "9.0"
  int driver_version = 0;          // cudaDriverGetVersion
  std::string blockres_version;    // "0.1.0 (git 1a2b3c4d5e6f)": the kernels' code, not only the release number
  std::string bsrmv_space;         // bsrmv_space_hash
};
// The key of this binary (version.hpp) with `space` on the device `id`.
TuningKey make_tuning_key(const CudaDeviceIdentity& id, const BsrmvSpace& space);
// The first field in which `file` differs from `here`, as "driver_version: 12040 in the file, 12080 here";
// "" when the keys are equal.
std::string tuning_key_mismatch(const TuningKey& file, const TuningKey& here);
// 8 hex digits of every key field: the default file name's suffix.
std::string tuning_key_hash(const TuningKey& key);

// The folder of the default caches: $BLOCKRES_TUNING_DIR, else $XDG_CACHE_HOME/blockres (an absolute
// XDG_CACHE_HOME only, as the XDG spec says), else $HOME/.cache/blockres; "" when none is set.
std::string default_tuning_dir();
// A device name as a file name part: letters, digits, '-' and '.' kept, anything else '_'
// ("NVIDIA H100 80GB HBM3" -> "NVIDIA_H100_80GB_HBM3").
std::string sanitized_gpu_name(std::string_view gpu);
// <default_tuning_dir()>/tuning-<sanitized GPU name>-<tuning_key_hash>.json; "" without a folder.
std::string default_tuning_cache_path(const TuningKey& key);

// One configuration as measured: its times on the two stencils and the fraction of the read-only
// stream each reached (bytes of the byte model / time / ceiling).
struct TunedConfig {
  kernels::BsrmvConfig config;
  double stencil7_ms = 0, stencil27_ms = 0;
  double stencil7_read_fraction = 0, stencil27_read_fraction = 0;
  double sum_ms() const { return stencil7_ms + stencil27_ms; }
};

// A block size's outcome: the fastest configuration by the sum of the two stencils' times (among those
// whose results verified), the runner-up, and the built-in rule's configuration measured in the same run
// (the rule for the 7-point stencil's matrix: where the rule's row-length key gives the 27-point
// stencil's long rows another configuration, `blockres tune` logs it; the cache holds one per bs).
struct TunedBlockSize {
  int bs = 0;
  TunedConfig best;
  std::optional<TunedConfig> runner_up;
  std::optional<TunedConfig> rule;  // absent only when the rule's configuration gave a wrong result
  int configs_timed = 0;            // every compiled configuration of bs
  int configs_wrong = 0;            // of them, results that did not verify (never chosen)
};

// One configuration's measurement on both stencils: median times, the fraction of the read-only stream
// each reached, and the max relative error of its result against the CPU reference (NaN: not run).
struct BsrmvMeasurement {
  kernels::BsrmvConfig config;
  double stencil7_ms = 0, stencil27_ms = 0;
  double stencil7_read_fraction = 0, stencil27_read_fraction = 0;
  double stencil7_error = 0, stencil27_error = 0;
  // Both results within tol of the reference and both times finite: a configuration that fails this is
  // never chosen (nor runner-up).
  bool verified(double tol) const;
};
inline constexpr double bsrmv_tuning_tolerance = 1e-12;  // bench bsrmv's check of every result
// The selection of `blockres tune`: the verified configuration with the smallest sum of the two
// stencils' times (ties: the first in `measured`), the runner-up by the same sum, and `rule` as measured
// (absent when the rule's configuration was not verified or not measured). nullopt when no
// configuration verified.
std::optional<TunedBlockSize> choose_bsrmv_config(int bs, const std::vector<BsrmvMeasurement>& measured,
                                                  const kernels::BsrmvConfig& rule,
                                                  double tol = bsrmv_tuning_tolerance);

// The whole file.
struct TuningRecord {
  TuningKey key;
  std::string measured_utc;  // ISO 8601
  std::string command_line;
  double size_gb = 0;        // bytes of block values + indices of each stencil matrix
  int reps = 0, warmup = 0;
  double budget_s = 0, elapsed_s = 0;
  double read_gbs = 0, copy_gbs = 0;  // the ceilings measured in the same run
  std::vector<TunedBlockSize> bsrmv;  // ascending block sizes
  // Block sizes asked for but not measured (the budget ran out): they take the built-in rule.
  std::vector<int> not_measured;
  // What the selection was, for the reader of the file.
  std::string method;
};

// The record as the file's JSON, and back. parse_tuning_record checks the schema, the types of the
// fields it reads and that every block size is 1..64 and appears once; it does not check the key or the
// configurations (load_tuning_cache does). Throws TuningCacheError naming the field.
struct TuningCacheError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
Json tuning_record_json(const TuningRecord& r);
TuningRecord parse_tuning_record(const Json& j);

// Writes the record to `path` atomically: into a temporary of its own in the same folder (the process
// id and a counter in its name, so two `blockres tune` at once never write the same temporary), then
// renamed over `path`; a reader sees the old file or the new one, never a part. Throws
// std::runtime_error (DestinationError for a path that cannot take a file) naming the file.
void write_tuning_cache(const std::string& path, const TuningRecord& r);

// What a run does with its --tuning-cache option ("" = the default path, "none" = no cache).
enum class TuningCacheStatus { loaded, disabled, missing, stale, corrupt };
struct TuningLoad {
  TuningCacheStatus status = TuningCacheStatus::missing;
  std::string path;     // the file looked at ("" when disabled or without a default folder)
  KernelTuning tuning;  // loaded: the cache's configurations; otherwise the rule's (empty)
  std::string message;  // the one log line: which tuning, or why the built-in rule
  std::vector<std::string> details;  // loaded: one line per block size (for -v)
};
// Never throws for a bad file: a missing, stale (key mismatch: the field is named) or corrupt (not JSON,
// wrong schema, a configuration `space` does not hold: what, and the file) cache gives the built-in rule
// and says why in `message`.
TuningLoad load_tuning_cache(const std::string& option, const TuningKey& key, const BsrmvSpace& space);

// A TuningLoad's message with the built-in rule's device key (Executor::dram_gbps_per_sm) after its
// last ": built-in rule": "...: built-in rule, DRAM 36.4 GB/s per SM; ..."; unchanged when the line
// does not name the rule or the key is unknown (0).
std::string with_rule_key(std::string message, double dram_gbps_per_sm);

// What a bench report that runs BSRMV records of it, at the time it is written: "tuning_source" (the
// executor's KernelTuning::source), "bsrmv_configs" (describe_bsrmv_plans of every plan made from the
// tuning so far: per block size the configuration and whether the cache or the rule gave it) and
// "bsrmv_rule_dram_gb_per_s_per_sm" (the rule's key, Executor::dram_gbps_per_sm; null when unknown);
// on the CPU backend the first two say that the reference SpMV has none, the key is null.
void write_tuning_json(Json& j, const Executor& e);

}  // namespace blockres
