// Incomplete sparse approximate inverses (ISAI, Anzt et al., "Batched generation of incomplete
// sparse approximate inverses on GPUs", ../shared/papers/batched-isai.txt) of the triangular
// factors of an ILU(0) (kernels/ilu_isai/ilu.hpp): CPU references and the CUDA batched generation.
//
// The factors live in one CSR matrix LU (strictly lower: L with unit diagonal implied; diagonal
// and upper: U). Triangle::unit_lower means T = L, Triangle::upper means T = U.
// Pattern S = S(|T|^k), k >= 1 (the pattern of the k-th power of T's pattern, diagonal
// included; triangular like T). M approximates T^{-1} with
//   (T M - I)(i, j) = 0   for every (i, j) in S,
// column by column: for column j with rows J = {i : (i, j) in S} (sorted), T(J, J) m = e_j(J), a
// small triangular system (lower for L, upper for U), and M(J, j) = m.
// M is stored in CSR (the pattern's rows) so it is applied as an SpMV; the CSC view of the same
// pattern (col_ptr, row_ind, csr_pos) drives the generation.
//
// CUDA generation: one kernel per factor and column-length bucket; a group of W = 4, 8, 16 or 32
// lanes per column of at most W pattern entries, 32 / W columns per warp (lane t of a group
// gathers row J[t] of T(J, J) into shared memory, the triangular solve runs with one broadcast per
// step, and each lane writes its entry of m into M's CSR values); columns with more than 32
// entries are done by a second kernel, thread blocks striding over those columns with the system
// staged in global scratch memory (IsaiPattern::scratch_doubles: one max_long_m^2 slice per
// resident thread block, at most isai_long_blocks of them), so no column is rejected.
#pragma once

#include "kernels/ilu_isai/ilu.hpp"

#include <vector>

namespace blockres::kernels {

enum class Triangle { unit_lower, upper };

// Thread blocks of the CUDA long-column kernel (each reuses its scratch slice for every column
// it takes): enough to fill an H200 (132 SMs) several times over.
constexpr index_t isai_long_blocks = 1024;

// Host pattern analysis (host arrays of LU's pattern). Throws std::invalid_argument when
// power < 1 or LU's pattern is not square/sorted with a diagonal in every row.
struct IsaiPattern {
  Triangle tri = Triangle::unit_lower;
  int power = 1;
  index_t n = 0;
  std::vector<index_t> row_ptr, col;                // S by rows (CSR of M), columns sorted
  std::vector<index_t> col_ptr, row_ind, csr_pos;   // S by columns, rows sorted; csr_pos: index of
                                                    //   each (row_ind, column) entry in col / M's values
  std::vector<index_t> short_cols;                  // columns with <= 32 entries, by lane-group width:
  std::vector<index_t> short_bucket_ptr;            //   short_cols[short_bucket_ptr[b] .. [b+1]) have
                                                    //   m <= 4 << b entries (and more than half of it
                                                    //   for b > 0), in increasing order; 5 entries
  std::vector<index_t> long_cols;                   // columns with > 32 entries
  index_t max_long_m = 0;                           // entries of the longest long column (0: none)
  // Device scratch of the CUDA generation: a max_long_m^2 slice per thread block of the long
  // kernel, which runs min(long columns, isai_long_blocks) blocks (bounded, whatever the matrix).
  size64_t scratch_doubles() const;
  index_t nnz() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
};
IsaiPattern isai_pattern(Triangle tri, index_t n, const index_t* lu_row_ptr, const index_t* lu_col, int power);

namespace cpu {
// M's values (CSR order of p) from the current factors.
void isai_generate(const IsaiPattern& p, CsrView<const double> LU, double* m_val);
// y = T x with T the `tri` part of LU (unit diagonal for unit_lower); used by the sweeps.
void triangle_spmv(Triangle tri, CsrView<const double> LU, const double* x, double* y);
}  // namespace cpu

namespace cuda {
// Device copies of a pattern's arrays.
struct IsaiDevicePattern {
  const IsaiPattern* host = nullptr;
  const index_t* col_ptr = nullptr;
  const index_t* row_ind = nullptr;
  const index_t* csr_pos = nullptr;
  const index_t* short_cols = nullptr;
  const index_t* long_cols = nullptr;
};
// Asynchronous on `s`; `scratch` holds host->scratch_doubles() doubles (may be null when 0).
void isai_generate(stream_t s, const IsaiDevicePattern& p, CsrView<const double> LU, double* m_val, double* scratch);
void triangle_spmv(stream_t s, Triangle tri, CsrView<const double> LU, const double* x, double* y);
}  // namespace cuda

}  // namespace blockres::kernels
