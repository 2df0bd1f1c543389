// The CUDA-only parts of the bench suite (suite_cuda.cpp, CUDA builds only): the device's ceilings and
// the vendor baselines of the kernel rows (cuSPARSE's BSR product, cuBLAS's batched LU and inversion).
#pragma once

#include "linalg/array.hpp"
#include "linalg/bsr_matrix.hpp"
#include "miniapp/bench/suite.hpp"

namespace blockres::suite::cuda {

// Copy (cudaMemcpyAsync device to device, read + write counted) and read-only (stream_sum) bandwidth over
// buffers of `bytes` each, and the FP64 FMA throughput (kernels::cuda::fp64_peak over enough lanes to fill
// the device); `reps` timed after 5 untimed.
Ceilings device_ceilings(const ExecPtr& e, size64_t bytes, int reps);

// cusparseDbsrmv (row-major blocks, the same arrays as ours; bs 1: cusparseSpMV on them as CSR): y = A x, timed like
// ours.
bench::Timing cusparse_bsrmv(const ExecPtr& e, const BsrMatrix& A, const Array<double>& x, Array<double>& y,
                             int warmup, int reps);

// cuBLAS batched LU on `count` n x n blocks stored back to back (our row-major bytes: cuBLAS sees A^T, which
// costs the same): getrfBatched on a fresh copy of `a` each repetition (the copy untimed); getrsBatched with
// those factors on one right-hand side per block; matinvBatched (n <= 32) from `a`. Each result is checked
// by the caller through `out` (getrf: the factors; getrs: the solution; matinv: the inverses) where given.
bench::Timing cublas_getrf(const ExecPtr& e, int n, index_t count, const Array<double>& a, int warmup, int reps);
bench::Timing cublas_getrs(const ExecPtr& e, int n, index_t count, const Array<double>& a, const Array<double>& b,
                           int warmup, int reps);
bench::Timing cublas_matinv(const ExecPtr& e, int n, index_t count, const Array<double>& a, int warmup, int reps);
// cublasDgemvStridedBatched: x_k = A_k b_k for `count` row-major n x n blocks back to back (cuBLAS sees A^T:
// CUBLAS_OP_T), timed like ours; x receives the product of the last repetition.
bench::Timing cublas_gemv(const ExecPtr& e, int n, index_t count, const Array<double>& a, const Array<double>& b,
                          Array<double>& x, int warmup, int reps);

// Block-Jacobi by cuBLAS alone, the peer of the suite's block_jacobi rows: setup = cublasDmatinvBatched on the
// diagonal blocks read in place from A's values (BsrMatrix::diag_pos), apply = cublasDgemvStridedBatched with
// those inverses; z receives the apply's result (the caller compares it with ours). n = A's block size <= 32
// (matinvBatched's limit).
struct VendorPair {
  bench::Timing setup, apply;
};
VendorPair cublas_block_jacobi(const ExecPtr& e, const BsrMatrix& A, const Array<double>& r, Array<double>& z,
                               int warmup, int reps);

}  // namespace blockres::suite::cuda

namespace blockres::suite::cuda {
// The device's facts for the report's hardware.gpu: name, SM count, compute capability, memory (total and
// free), clocks, driver, CUDA runtime, cuBLAS and cuSPARSE versions.
Json device_facts(const ExecPtr& e);
}  // namespace blockres::suite::cuda

namespace blockres::suite::cuda {
// Tune first where there is no cache (issue 32): when `tuning_cache` is the default ("") and this device's
// default cache is missing, stale or corrupt, the BSRMV block sizes `bs` are tuned within `budget_s` (what
// `blockres tune --bs ... --budget-s ...` does) and the device's default cache written; returns a line for the
// report ("" when nothing was tuned: a cache was there, or --tuning-cache named one or none). Never throws: a
// failure to tune or to write leaves the built-in rule and says why in the returned line.
std::string tune_if_missing(const std::string& tuning_cache, const std::vector<int>& bs, double budget_s, const Log& log);
}  // namespace blockres::suite::cuda

