// Which library baselines of `blockres bench` can run on a matrix (see baseline_limits.hpp).
#include "miniapp/bench/baseline_limits.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace blockres::bench {

namespace {

std::string gb(double bytes) { return fmt::format("{:.2f} GB", bytes / 1e9); }

}  // namespace

std::string scalar_view_limit(const BsrShape& m, const BaselineLimits& lim)
{
  const std::uint64_t rows = m.scalar_rows(), cols = m.scalar_cols(), entries = m.scalar_entries();
  if (rows <= lim.index_limit && cols <= lim.index_limit && entries <= lim.index_limit) return {};
  return fmt::format("32-bit indices: the scalar view of {} x {} blocks of {}x{} ({} blocks) has {} rows, {} columns "
                     "and {} entries (blocks x bs x bs), more than the {} they address",
                     m.block_rows, m.block_cols, m.bs, m.bs, m.blocks, rows, cols, entries, lim.index_limit);
}

std::string device_memory_limit(std::string_view what, double need_bytes, double free_bytes, const BaselineLimits& lim)
{
  if (need_bytes + lim.reserve_bytes <= free_bytes) return {};
  return fmt::format("device memory: {} needs {} and {} more for the library's workspace, {} are free", what,
                     gb(need_bytes), gb(lim.reserve_bytes), gb(free_bytes));
}

std::string cublas_batched_limit(int n, std::uint64_t count, const BaselineLimits& lim)
{
  if (count <= lim.index_limit) return {};
  return fmt::format("cuBLAS batched calls take an int batch count: {} blocks of {}x{}, more than the {} it holds",
                     count, n, n, lim.index_limit);
}

std::string cublas_matinv_limit(int n)
{
  if (n <= 32) return {};
  return fmt::format("cublasDmatinvBatched inverts blocks of at most 32x32; these are {}x{}", n, n);
}

double expanded_csr_bytes(const BsrShape& m)
{
  return 4.0 * double(m.scalar_rows() + 1) + 12.0 * double(m.scalar_entries());
}

double block_values_bytes(const BsrShape& m) { return 8.0 * double(m.scalar_entries()); }

std::vector<BaselineDecision> plan_bsrmv_baselines(const BsrShape& m, double free_bytes, const BaselineLimits& lim)
{
  std::vector<BaselineDecision> plan;
  const std::string index = scalar_view_limit(m, lim);
  auto first = [](const std::string& a, const std::string& b) { return a.empty() ? b : a; };
  if (m.bs >= 2) {
    const std::string col = first(
        index, device_memory_limit("the column-major copy of the values", block_values_bytes(m), free_bytes, lim));
    plan.push_back({"cusparse_bsrmv_row", index});
    plan.push_back({"cusparse_bsrmv_col", col});
    plan.push_back({"cusparse_spmv_bsr_row", index});
    plan.push_back({"cusparse_spmv_bsr_col", col});
  }
  const std::string csr =
      first(index, device_memory_limit("the expanded CSR copy", expanded_csr_bytes(m), free_bytes, lim));
  plan.push_back({"cusparse_spmv_csr_default", csr});
  plan.push_back({"cusparse_spmv_csr_alg2", csr});
  return plan;
}

BaselineDecision plan_cusparse_ilu0(const BsrShape& m, bool block, double free_bytes, const BaselineLimits& lim)
{
  BaselineDecision d{block ? "bsrilu02" : "csrilu02", scalar_view_limit(m, lim)};
  if (d.skipped.empty()) {
    // The pristine values and the factor storage; the CSR path adds the expansion's indices.
    const double need = 2 * block_values_bytes(m) + (block ? 0.0 : expanded_csr_bytes(m) - block_values_bytes(m));
    d.skipped = device_memory_limit(block ? "bsrilu02's copies of the values"
                                          : "csrilu02's expanded CSR copy and factor storage",
                                    need, free_bytes, lim);
  }
  return d;
}

std::string skip_line(std::string_view section, std::string_view matrix, const std::vector<std::string>& names,
                      std::string_view reason)
{
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return fmt::format("{}: {}: skipped baseline{} {}: {}", section, matrix, names.size() == 1 ? "" : "s", list, reason);
}

std::vector<std::string> skip_lines(std::string_view section, std::string_view matrix,
                                    const std::vector<BaselineDecision>& plan)
{
  std::vector<std::string> reasons;
  for (const auto& d : plan)
    if (!d.skipped.empty() && std::find(reasons.begin(), reasons.end(), d.skipped) == reasons.end())
      reasons.push_back(d.skipped);
  std::vector<std::string> lines;
  for (const auto& why : reasons) {
    std::vector<std::string> names;
    for (const auto& d : plan)
      if (d.skipped == why) names.push_back(d.name);
    lines.push_back(skip_line(section, matrix, names, why));
  }
  return lines;
}

}  // namespace blockres::bench
