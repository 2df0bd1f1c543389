// Batched LU factorisation with partial (row) pivoting and the matching solve, for a batch of
// square row-major blocks of sizes 1..512 (see kernels/batched/batched.hpp for the layout).
#pragma once

#include "kernels/batched/batched.hpp"

#include <cstddef>

namespace blockres::kernels {

// Largest block the batched LU accepts (the MAGMA batched LU range).
constexpr int batched_lu_max_size = 512;

// lu_factor: in place, P A = L U for every block as LAPACK's getrf, but row-major and with 0-based
//   pivots: at step k row k of the block was interchanged with row piv[row(b) + k] >= k; L (unit
//   lower, diagonal not stored) and U share the block's storage. info[b] follows batched.hpp: 0, or
//   k > 0 when the k-th pivot is zero, not finite, or |pivot| <= n_b * eps * max|A_b| (the largest
//   magnitude of the original block; NaN entries are ignored there but never chosen as pivots
//   while a finite candidate remains). The pivot at step k is the first row (in the current order)
//   holding the largest magnitude of column k, as LAPACK's idamax.
// lu_solve: x = A^{-1} b from lu_factor's output: interchanges, forward then backward
//   substitution. b and x must not alias. Blocks whose factorisation failed give undefined x
//   (but every access stays inside the block).
// Both throw std::invalid_argument when max_size is outside 1..512, count < 0, uniform > 0 with
// max_size != uniform, or a variable layout without offset arrays; cpu:: also when a block's size
// exceeds max_size.
namespace cpu {
void lu_factor(const BatchLayout& L, double* a, index_t* piv, int* info);
void lu_solve(const BatchLayout& L, const double* lu, const index_t* piv, const double* b, double* x);
}  // namespace cpu

// lu_inverse: the explicit inverse A^{-1} (row-major n x n, 1 <= n <= 512) of ONE block from lu_factor's
//   output (lu, piv of a batch of one): column j is lu_solve's x for b = e_j, with the same interchanges
//   and the same substitutions in the same order, so both backends give the same bits. inv must not alias
//   lu. For the AMG's coarsest level (issue 30): a dense product with the inverse is one short launch,
//   where the substitutions of a 129..512-row block take a thread block ~200 us. A block whose
//   factorisation failed gives an undefined inverse (every access stays inside it). Throws
//   std::invalid_argument when n is outside 1..512. cuda: a thread block per column, asynchronous on s.
namespace cpu {
void lu_inverse(int n, const double* lu, const index_t* piv, double* inv);
}

// Asynchronous on stream s (no synchronisation, no allocation); all pointers, including the
// layout's offset arrays, are device memory. No workspace is needed. lu_factor: blocks of size 0..32
// use a register kernel (one lane group per block), 33..56 a row kernel (two warps per block, a row per
// thread), 57..512 a blocked kernel (one thread block per block); the first two agree with the CPU
// reference bit for bit. lu_solve: uniform 4..24 a lane per block; otherwise 0..16 a lane group per
// block, 17..64 a warp per block (the block staged in shared memory), 65..128 a warp per block reading
// the factors row by row, 129..512 a thread block per block; above 16 rows its results agree with the
// CPU reference's to rounding (reciprocal pivots, reassociated sums), not bit for bit.
// Blocks above about 128 rows need more than 48 KB of shared memory per thread block: lu_factor
// throws std::runtime_error, naming the bytes, the device's limit and the largest size that fits,
// when a batch holds blocks too large for the device (sm_86/89: above 432 rows).
namespace cuda {
void lu_factor(stream_t s, const BatchLayout& L, double* a, index_t* piv, int* info);
void lu_solve(stream_t s, const BatchLayout& L, const double* lu, const index_t* piv, const double* b, double* x);
void lu_inverse(stream_t s, int n, const double* lu, const index_t* piv, double* inv);
// Test hook: a nonzero value replaces the device's shared-memory limit per thread block (a GPU test
// plays an sm_86 on a Hopper); 0 restores the device's.
void set_lu_shared_limit_for_tests(std::size_t bytes);
}  // namespace cuda

// Shared argument check of both backends (throws std::invalid_argument naming `what`).
void batched_lu_check_layout(const BatchLayout& L, const char* what);

}  // namespace blockres::kernels
