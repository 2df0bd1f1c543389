// Batched Gauss–Huard decomposition/application (BGH, BGHT) and Gauss–Jordan inversion (BGJE)
// of small dense blocks of varying size (1..32), CPU references and CUDA kernels.
//
// Gauss–Huard (GH) with column pivoting, Anzt et al., "Variable-size batched Gauss–Huard for
// block-Jacobi preconditioning" (../shared/papers/gauss-huard-block-jacobi.txt). Step k of the
// decomposition of an n x n block A (k = 0..n-1; rows are never permuted):
//   1. row elimination   A(k, c) -= sum_{j<k} A(k, p_j) * A(j, c)   for every column c not yet chosen
//   2. pivot             p_k = the not-yet-chosen column with the largest |A(k, c)|
//   3. diagonalisation   A(k, c) /= A(k, p_k)                        for c not chosen, c != p_k
//   4. column elimination A(i, c) -= A(i, p_k) * A(k, c)             for i < k, c not chosen, c != p_k
// The pivoting is implicit: columns are never exchanged during the computation, only the chosen
// column p_k of each step is recorded. The result is stored in pivoted order, D(i, k) = A(i, p_k):
//   L(k, j) = D(k, j), j <= k   row-elimination multipliers and the pivots D(k, k)
//   U(i, k) = D(i, k), i < k    column-elimination multipliers (strictly upper)
// and perm[row(b) + k] = p_k. The application x = A^{-1} b runs, for k = 0..n-1,
//   y(k) = (b(k) - sum_{j<k} L(k, j) y(j)) / L(k, k);   y(i) -= U(i, k) y(k) for i < k
// and finishes with x(p_k) = y(k): both triangular stages in one pass.
//
// Storage of the factors of block b (row-major, n = n_b, f = factors + mat(b)):
//   GhStorage::standard    (BGH)  f[i*n + j] = D(i, j) for all i, j.
//   GhStorage::transposed  (BGHT) lower part as standard, f[i*n + j] = D(i, j) for j <= i; the strict
//                          upper part transposed about the anti-diagonal, f[i*n + j] = U(n-1-j, n-1-i)
//                          for j > i. Column k of U is then the contiguous row n-1-k (entries
//                          n-k..n-1, reversed), so the application reads both parts coalesced.
//
// Pivot rule (identical on both backends): the candidate with the largest |value| wins, a NaN
// counts as +infinity (so a NaN pivot is caught), ties go to the lowest column index.
// info[b] follows kernels/batched/batched.hpp: 0 ok; k > 0 when pivot k (1-based) is zero, not finite or
// |pivot| <= n_b * DBL_EPSILON * max|A_b|; factors (and inverse) of a failed block are undefined,
// but its perm is always a permutation, so applying a failed block never writes out of its rows.
//
// Gauss–Jordan inversion (BGJE, Anzt et al. 2017, the block-Jacobi inversion the GH paper compares
// against): in-place A -> A^{-1} with implicit column pivoting: step k picks, among the columns not
// yet chosen, the one with the largest |A(k, c)| (same rule as above) and eliminates with it; the
// pivoting is undone when the result is written. block_diag_gemv then applies the inverses.
//
// Programming errors throw std::invalid_argument on the host before anything runs:
// max_size outside 1..32 (1.. for block_diag_gemv on the CPU), count < 0, uniform > 0 with
// max_size != uniform, and on the CPU a block larger than max_size or a perm entry out of range.
// The CUDA kernels cannot throw: a block with n_b > max_size gets info[b] = -1 (factor/invert) or
// NaN outputs (solve/gemv) and its memory is not touched.
#pragma once

#include "kernels/batched/batched.hpp"

namespace blockres::kernels {

// Largest block the register kernels handle (one matrix column per lane of a warp).
constexpr int batched_gh_max_size = 32;

enum class GhStorage { standard, transposed };

namespace cpu {
// In place: a holds the blocks on entry, their GH factors (as `storage`) on return.
void gauss_huard_factor(const BatchLayout& L, double* a, index_t* perm, int* info, GhStorage storage);
// x = A^{-1} b per block from the factors of gauss_huard_factor; b and x must not alias.
void gauss_huard_solve(const BatchLayout& L, const double* factors, const index_t* perm, GhStorage storage,
                       const double* b, double* x);
// In place: a holds the blocks on entry, their inverses on return.
void gauss_jordan_invert(const BatchLayout& L, double* a, int* info);
// y = blockdiag(inv) x; x and y must not alias. Any block size >= 1. The fp32 form reads inverses
// stored in fp32 (block-Jacobi's fp32 storage) and computes in fp64.
void block_diag_gemv(const BatchLayout& L, const double* inv, const double* x, double* y);
void block_diag_gemv(const BatchLayout& L, const float* inv, const double* x, double* y);
}  // namespace cpu

namespace cuda {
// Same operations on device memory (the layout's offset arrays too). Asynchronous on `s`:
// no synchronisation, no allocation. One warp-lane group of pow2ceil(max_size) lanes per block.
void gauss_huard_factor(stream_t s, const BatchLayout& L, double* a, index_t* perm, int* info, GhStorage storage);
void gauss_huard_solve(stream_t s, const BatchLayout& L, const double* factors, const index_t* perm,
                       GhStorage storage, const double* b, double* x);
void gauss_jordan_invert(stream_t s, const BatchLayout& L, double* a, int* info);
void block_diag_gemv(stream_t s, const BatchLayout& L, const double* inv, const double* x, double* y);
void block_diag_gemv(stream_t s, const BatchLayout& L, const float* inv, const double* x, double* y);
}  // namespace cuda

}  // namespace blockres::kernels
