// Whether a library baseline of `blockres bench` can represent a matrix: the limits of its index and
// argument types and the device memory its extra copies need. Free of CUDA, so the decisions are tested
// on the CPU (miniapp/bench/test/test_baseline_limits.cpp). A section asks before it builds a baseline;
// a reason means: skip that baseline with one log line (skip_line) and a "skipped" entry in the report,
// and still time and verify ours.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace blockres::bench {

// What 32-bit signed indices address: 2^31 - 1 (CUSPARSE_INDEX_32I, cuSPARSE's and cuBLAS's int arguments).
inline constexpr std::uint64_t int32_limit = 0x7fffffff;

// The limits the baselines are held to (BenchCommonOptions::baseline_limits). A test lowers index_limit
// so that a small matrix meets it as a large one meets 2^31 - 1.
struct BaselineLimits {
  std::uint64_t index_limit = int32_limit;
  // Device memory kept free beside a baseline's copies, for the library's own workspace (SpMV buffers,
  // analysis data), which is only known after the copies exist.
  double reserve_bytes = 256.0 * 1024 * 1024;
};

// A BSR matrix's sizes.
struct BsrShape {
  std::uint64_t block_rows = 0, block_cols = 0, blocks = 0;
  int bs = 1;
  std::uint64_t scalar_rows() const { return block_rows * std::uint64_t(bs); }
  std::uint64_t scalar_cols() const { return block_cols * std::uint64_t(bs); }
  std::uint64_t scalar_entries() const { return blocks * std::uint64_t(bs) * std::uint64_t(bs); }
};

// Why 32-bit indices cannot hold the scalar view (rows, columns and entries nnzb x bs x bs, the expanded
// CSR) of the matrix: "" when they can. cuSPARSE's BSR calls with 32-bit indices are held to it too:
// their value offsets (block x bs x bs) are not documented to be 64-bit.
std::string scalar_view_limit(const BsrShape& m, const BaselineLimits& lim);

// Why `need_bytes` of device memory (`what`: "the expanded CSR copy") cannot be allocated while
// `free_bytes` are free, keeping lim.reserve_bytes for the library: "" when it fits.
std::string device_memory_limit(std::string_view what, double need_bytes, double free_bytes,
                                const BaselineLimits& lim);

// cuBLAS batched calls on `count` n x n blocks (int batchCount); cublasDmatinvBatched inverts n <= 32 only.
std::string cublas_batched_limit(int n, std::uint64_t count, const BaselineLimits& lim);
std::string cublas_matinv_limit(int n);

// Device bytes of the expanded scalar CSR (row pointers, column indices, values) and of a copy of the
// block values (8 bs^2 per block).
double expanded_csr_bytes(const BsrShape& m);
double block_values_bytes(const BsrShape& m);

// One baseline of a plan: its report name and why it is skipped ("" when it runs).
struct BaselineDecision {
  std::string name;
  std::string skipped;
};

// bench bsrmv's cuSPARSE baselines in the order they run: for bs >= 2 cusparse_bsrmv_row,
// cusparse_bsrmv_col, cusparse_spmv_bsr_row, cusparse_spmv_bsr_col (the _col ones on a column-major copy
// of the values), then cusparse_spmv_csr_default and cusparse_spmv_csr_alg2 on the expanded CSR.
// free_bytes: device memory free before the baselines (each copy is freed before the next is made).
std::vector<BaselineDecision> plan_bsrmv_baselines(const BsrShape& m, double free_bytes, const BaselineLimits& lim);

// bench isai's cuSPARSE ILU(0): csrilu02 + SpSV on the expanded CSR (block = false: its copy and factor
// storage) or bsrilu02 + bsrsv2 on the BSR arrays (block = true: two copies of the values).
BaselineDecision plan_cusparse_ilu0(const BsrShape& m, bool block, double free_bytes, const BaselineLimits& lim);

// The log line of the skipped baselines sharing one reason: "<section>: <matrix>: skipped baseline(s)
// <names>: <reason>" (the names in report spelling).
std::string skip_line(std::string_view section, std::string_view matrix, const std::vector<std::string>& names,
                      std::string_view reason);

// The log lines of a plan: one per distinct reason, its baselines in order; none when all run.
std::vector<std::string> skip_lines(std::string_view section, std::string_view matrix,
                                    const std::vector<BaselineDecision>& plan);

}  // namespace blockres::bench
