// Block-sparse matrix-vector product y = alpha*A*x + beta*y (KSPARSE design on the GPU):
// CPU reference, CUDA kernels in three size classes, row balancing, the tuning search space and rule.
#pragma once

#include "kernels/common.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace blockres::kernels {

// A is BSR (see BsrView); x has ncols*bs entries, y has nrows*bs entries.
// beta == 0: y is write-only (not read), so garbage or NaN in y does not leak into the result.

// Rows longer than max_blocks are split into segments of at most max_blocks blocks
// (the "balanced BSR" of the KSPARSE paper): seg_ptr[r]..seg_ptr[r+1] are the segments of
// block row r, and segment s covers blocks row_ptr[s]..row_ptr[s+1] of the original arrays.
struct BalancedRows {
  std::vector<index_t> row_ptr;  // nsegments + 1, into the original col_ind/values
  std::vector<index_t> seg_ptr;  // nrows + 1
};
BalancedRows balance_rows(const index_t* row_ptr, index_t nrows, index_t max_blocks);

namespace cpu {
void bsrmv(const BsrView<const double>& A, double alpha, const double* x, double beta, double* y);
// y[r] = alpha * sum_{s in seg(r)} partial[s] + beta * y[r]   (rows of bs entries)
void segment_reduce(index_t nrows, int bs, const index_t* seg_ptr, const double* partial, double alpha, double beta,
                    double* y);
}  // namespace cpu

// ---- CUDA -----------------------------------------------------------------------------------
// Size classes (KSPARSE):
//   small  (bs <= 5): a warp holds floor(32/bs^2) whole blocks, one element per lane (K1);
//   medium: a thread array of bs rows x `groups` thread groups per block row, each thread a
//           slice of one row (uneven slices when groups do not divide bs), `arrays` thread
//           arrays (block rows) per thread block; 16-byte loads where aligned (K2);
//   staged: the medium layout with each thread block's values and column indices copied to
//           shared memory first (cp.async, coalesced): every bs, whatever its lane alignment;
//   wide:   lane groups of min(32, pow2ceil(bs)) lanes stream the rows of a block, each thread
//           keeping several row accumulators, reduced by warp shuffles;
//   large:  the wide kernel with the rows of every block split over `row_split` thread blocks
//           (several thread blocks per block, K3).
enum class BsrmvKernel { small, medium, wide, large, staged };
std::string_view to_string(BsrmvKernel k);

struct BsrmvConfig {
  BsrmvKernel kernel = BsrmvKernel::wide;
  int warps = 4;          // small/wide/large: warps per thread block
  int unroll = 2;         // small: block rows in flight per warp; others: blocks in flight
  int rows_per_warp = 1;  // small: consecutive block rows per warp (multiple of unroll)
  int row_split = 1;      // large: thread blocks per block (rows of each block split)
  int groups = 1;         // medium/staged: thread groups per row (Ntg)
  int arrays = 1;         // medium/staged: thread arrays (block rows) per thread block
  // medium: how a pass of `unroll` blocks treats the row end. false: loads predicated on it
  // (the compiler may unroll the loop further); true: indices clamped to the last block, so
  // every pass issues its loads unconditionally, branch-free, and the loop is not re-unrolled.
  bool clamped = false;
  bool operator==(const BsrmvConfig& o) const  // .cu files are C++17: no defaulted ==
  {
    return kernel == o.kernel && warps == o.warps && unroll == o.unroll && rows_per_warp == o.rows_per_warp &&
           row_split == o.row_split && groups == o.groups && arrays == o.arrays && clamped == o.clamped;
  }
};
std::string describe(const BsrmvConfig& c);

// The device property the built-in rule keys on: the theoretical DRAM bandwidth per SM in GB/s,
// 2 (double data rate) x memory clock x bus width / 8 / SM count, from cudaDevAttrMemoryClockRate
// (kHz), cudaDevAttrGlobalMemoryBusWidth (bits) and cudaDevAttrMultiProcessorCount (the executor
// queries them: Executor::dram_gbps_per_sm). 0 (unknown) when any of them is not positive.
// H100 SXM (2619 MHz, 5120 bits, 132 SMs): 25.4; H200 (4.8 TB/s nominal on 6144 bits, 132 SMs): 36.4.
inline double dram_gbps_per_sm(int memory_clock_khz, int bus_width_bits, int sm_count)
{
  if (memory_clock_khz <= 0 || bus_width_bits <= 0 || sm_count <= 0) return 0.0;
  return 2.0 * double(memory_clock_khz) * 1e3 * (double(bus_width_bits) / 8.0) / double(sm_count) / 1e9;
}

namespace cuda {
// Every configuration compiled for block size bs (the tuning search space).
std::vector<BsrmvConfig> bsrmv_configs(int bs);
// The built-in rule (bsrmv_tuning.cpp): the configuration of bs when the executor's tuning
// (linalg/kernel_tuning.hpp, read from a tuning cache that `blockres tune` measured) has none, on a
// device with `dram_gbps_per_sm` (dram_gbps_per_sm above; 0: unknown), for a matrix with
// `mean_row_blocks` blocks per block row on average (nonzero blocks / block rows, BsrMatrix::
// mean_row_blocks; 0: unknown). Above bsrmv_rule_high_bandwidth_gbps_per_sm a few block sizes take
// other configurations (an H200 against an H100); 0 takes the choices below it. Above it, a few block
// sizes also split on the row length: rows of more than bsrmv_rule_long_row_blocks blocks (the 3D
// 27-point stencil) against shorter ones (the 7-point stencil, and the reservoir Jacobians); an unknown
// length (0) and the threshold itself take the short-row choices. Below the bandwidth threshold the
// row length is not used. Always one of bsrmv_configs(bs), for bs in 1..64.
inline constexpr double bsrmv_rule_high_bandwidth_gbps_per_sm = 30.0;
inline constexpr double bsrmv_rule_long_row_blocks = 16.0;
BsrmvConfig bsrmv_rule(int bs, double dram_gbps_per_sm, double mean_row_blocks);

// Throws std::invalid_argument for bs outside 1..64 or a configuration not compiled.
void bsrmv(stream_t s, const BsrView<const double>& A, double alpha, const double* x, double beta, double* y,
           const BsrmvConfig& config);
void segment_reduce(stream_t s, index_t nrows, int bs, const index_t* seg_ptr, const double* partial, double alpha,
                    double beta, double* y);
}  // namespace cuda

}  // namespace blockres::kernels
