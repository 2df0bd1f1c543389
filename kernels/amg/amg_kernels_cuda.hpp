// CUDA kernels of the aggregation AMG (amg_kernels_cuda.cu), the twins of the cpu:: kernels of
// amg_kernels.hpp. Device pointers, asynchronous on stream s except where a count is returned
// (then the stream is synchronised). Outputs whose size is only known on the device are made in
// two steps: a count, then a fill into memory the caller (amg_ops_cuda.cpp) allocated.
#pragma once

#include "kernels/amg/amg_kernels.hpp"

#include <cstdint>

namespace blockres::amg::cuda {

// Strength graph (cpu::strength_graph): d (n) receives |a_ii|, off (n + 1) the offsets of every
// row's directed edge pairs; returns their number m. strength_emit writes the m edges as keys
// (row * n + col) and weights; sort_segments + segment_reduce (max) + rows_from_keys give G.
size64_t strength_count(stream_t s, const CsrRef& A, index_t n_local, double theta, double* d, size64_t* off);
void strength_emit(stream_t s, const CsrRef& A, index_t n_local, double theta, const double* d, const size64_t* off,
                   std::uint64_t* keys, double* vals);
// Stable sort of (keys, vals); head[e] = 1 where a new key starts, seg[e] its segment. Returns the
// number of distinct keys.
index_t sort_segments(stream_t s, size64_t m, std::uint64_t* keys, double* vals, index_t* head, index_t* seg);
// One entry per segment: col = key % ncols, out = the segment's values reduced in order (sum, or
// max), ukeys = the key.
void segment_reduce(stream_t s, size64_t m, const std::uint64_t* keys, const double* vals, const index_t* head,
                    const index_t* seg, index_t ncols, bool max, index_t* col, double* out, std::uint64_t* ukeys);
// row_ptr (nrows + 1) from the sorted distinct keys.
void rows_from_keys(stream_t s, const std::uint64_t* ukeys, index_t nnz, index_t nrows, index_t ncols, index_t* row_ptr);
void fill(stream_t s, index_t n, index_t value, index_t* a);

// Handshake matching (cpu::handshake_match): mate starts at -1; match_round returns the number of
// nodes matched in the round; match_finish joins the free nodes and numbers the aggregates
// (number: n + 1 entries), returning their count.
index_t match_round(stream_t s, const CsrRef& G, index_t* mate, index_t* choice, index_t* counter);
index_t match_finish(stream_t s, const CsrRef& G, const index_t* mate, index_t* root, index_t* number, index_t* agg);

// MIS(2) aggregation (cpu::mis2_aggregate): mis_round returns the nodes still undecided.
void mis_init(stream_t s, const CsrRef& G, signed char* state);
index_t mis_round(stream_t s, const CsrRef& G, signed char* state, index_t* m1, index_t* m2, index_t* counter);
index_t mis_finish(stream_t s, const CsrRef& G, const signed char* state, index_t* number, index_t* first, index_t* agg);

// Coarse graph (cpu::coarse_graph): edge count and emission (keys I * nc + J), then
// sort_segments + segment_reduce (sum) + rows_from_keys.
size64_t coarse_count(stream_t s, const CsrRef& G, const index_t* agg, size64_t* off);
void coarse_emit(stream_t s, const CsrRef& G, const index_t* agg, index_t nc, const size64_t* off, std::uint64_t* keys,
                 double* vals);
void compose(stream_t s, index_t n, index_t* agg, const index_t* pass_agg);

// Tentative prolongation: row_ptr (n + 1), returns nnz; then the entries.
index_t p0_pattern(stream_t s, index_t n, const index_t* agg, index_t* row_ptr);
void p0_fill(stream_t s, index_t n, const index_t* agg, const index_t* row_ptr, index_t* col_ind, double* values);

double jacobi_radius_bound(stream_t s, const CsrRef& A, double* scratch /* 1 */);
void smoothed_prolongation(stream_t s, const CsrRef& A, const index_t* agg, double omega, const CsrRef& P,
                           double* p_values);
index_t jacobi_scaling(stream_t s, const CsrRef& A, double omega, bool l1, double* dinv, index_t* scratch);
// The same without a host synchronisation, results left in device memory: the radius bound in *rho;
// P smoothed with omega = 4 / (3 rho) read from *rho on the device (0 when rho = 0); the first row
// with a bad scaling in *first_bad (INT_MAX when none).
void jacobi_radius_bound_into(stream_t s, const CsrRef& A, double* rho);
void smoothed_prolongation_from(stream_t s, const CsrRef& A, const index_t* agg, const double* rho, const CsrRef& P,
                                double* p_values);
void jacobi_scaling_into(stream_t s, const CsrRef& A, double omega, bool l1, double* dinv, index_t* first_bad);
void densify(stream_t s, const CsrRef& A, double* dense);
// Transpose by a permutation map (cpu::transpose_numeric): v[k] = k (exact in a double below
// 2^53), map[k] = v[k] after the symbolic transpose has permuted v; dst[k] = src[map[k]].
void iota(stream_t s, size64_t n, double* v);
void to_index(stream_t s, size64_t n, const double* v, index_t* map);
void gather(stream_t s, size64_t n, const double* src, const index_t* map, double* dst);
// a[0..n) == b[0..n) (scratch: one index_t of device memory).
bool equal(stream_t s, const index_t* a, const index_t* b, size64_t n, index_t* scratch);
// a1 == b1 and a2 == b2, with one synchronisation.
bool equal2(stream_t s, const index_t* a1, const index_t* b1, size64_t n1, const index_t* a2, const index_t* b2,
            size64_t n2, index_t* scratch);

void spmv(stream_t s, const CsrRef& A, double alpha, const double* x, double beta, double* y);
void jacobi_sweep(stream_t s, const CsrRef& A, const double* dinv, const double* b, const double* x_in, double* x_out);
void residual(stream_t s, const CsrRef& A, const double* b, const double* x, double* r);
void smooth_zero_residual(stream_t s, const CsrRef& A, const double* dinv, const double* b, double* x, double* r);
// The same with fp32 values (cpu:: twins in amg_kernels.hpp).
void spmv(stream_t s, const CsrRef32& A, double alpha, const double* x, double beta, double* y);
void jacobi_sweep(stream_t s, const CsrRef32& A, const double* dinv, const double* b, const double* x_in, double* x_out);
void residual(stream_t s, const CsrRef32& A, const double* b, const double* x, double* r);
void smooth_zero_residual(stream_t s, const CsrRef32& A, const double* dinv, const double* b, double* x, double* r);
// cpu::ilu_jacobi_sweep (one lane group per row, as the kernels above).
void ilu_jacobi_sweep(stream_t s, const CsrRef& LU, const double* dinv, bool upper, const double* b, const double* x,
                      double* y);

// Lanes per row of the cycle kernels above (2, 4, 8, 16 or 32) for a matrix of nrows rows and nnz
// entries on a device that keeps resident_threads threads in flight: 2 for rows of <= 2.5 entries,
// else 4, doubled while the rows hold more entries than lanes and nrows x lanes threads would not
// fill the device (the coarse levels: a few thousand rows of ~100 entries).
int cycle_lane_group(index_t nrows, size64_t nnz, size64_t resident_threads);
// Threads the current device keeps in flight (SMs x resident threads per SM).
size64_t device_resident_threads();

}  // namespace blockres::amg::cuda
