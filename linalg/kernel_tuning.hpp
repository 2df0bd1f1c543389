// The kernel tuning an executor holds: per block size the BSRMV configuration a tuning cache measured
// on this device (`blockres tune`), and where it came from; a block size without one takes the rule.
#pragma once

#include "kernels/spmv/bsrmv.hpp"

#include <map>
#include <optional>
#include <string>

namespace blockres {

// Plain data, so that it is built and tested without a device: the tuning cache's reader
// (miniapp/io/tuning_cache.hpp) fills it, the executor holds it (Executor::tuning()), and BsrMatrix
// plans its SpMV from it (linalg/bsr_matrix.cpp: an explicit SpmvOptions::config first, then
// bsrmv(bs), then kernels::cuda::bsrmv_rule(bs, Executor::dram_gbps_per_sm(), the matrix's mean blocks
// per block row)). A measured configuration is per block size only; the row length keys only the rule.
struct KernelTuning {
  static constexpr const char* rule_source = "built-in rule";

  // "built-in rule", or "tuning cache <path> (measured <UTC date>)": logged once by the run, written
  // into result files (attribute bsrmv_tuning) and bench reports ("tuning_source").
  std::string source = rule_source;
  // Block size -> the configuration measured fastest on this device. Block sizes that are missing
  // (not measured: not asked for, or the tuning's time budget ran out) take the built-in rule.
  std::map<int, kernels::BsrmvConfig> bsrmv_measured;

  std::optional<kernels::BsrmvConfig> bsrmv(int bs) const
  {
    const auto it = bsrmv_measured.find(bs);
    return it == bsrmv_measured.end() ? std::nullopt : std::optional(it->second);
  }
  // Where bs's configuration comes from: "measured" (on this device: by the source) or "built-in rule".
  const char* bsrmv_origin(int bs) const { return bsrmv_measured.count(bs) ? "measured" : rule_source; }
};

// The BSRMV plans an executor made from its tuning (block size -> configuration), one line:
// "bs 1: medium(groups=1, arrays=32, unroll=4, clamped) [built-in rule]; bs 3: ... [measured]",
// a block size once per configuration it planned (the rule keys on the row length too), or "none"
// when it made none.
inline std::string describe_bsrmv_plans(const std::multimap<int, kernels::BsrmvConfig>& plans,
                                        const KernelTuning& t)
{
  std::string s;
  for (const auto& [bs, c] : plans)
    s += (s.empty() ? "" : "; ") + ("bs " + std::to_string(bs) + ": " + kernels::describe(c) + " [" +
                                    t.bsrmv_origin(bs) + "]");
  return s.empty() ? std::string("none") : s;
}

}  // namespace blockres
