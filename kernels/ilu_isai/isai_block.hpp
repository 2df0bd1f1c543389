// Block view of the incomplete sparse approximate inverse (ISAI, Anzt et al., "Batched generation
// of incomplete sparse approximate inverses on GPUs", ../shared/papers/batched-isai.txt): the
// units are the block rows and block columns of a BSR pattern, not scalar rows/columns.
//
// Kinds:
//   unit_lower  M ~ L^{-1}, L = the strictly lower part of the matrix with a unit diagonal
//               (the L factor of an ILU(0) stored in the matrix, as kernels/ilu_isai/ilu.hpp);
//   upper       M ~ U^{-1}, U = the diagonal and upper part;
//   general     M ~ A^{-1} of the whole matrix (stand-alone preconditioner "isai");
//   unit_block_lower  M ~ L^{-1}, L = the strictly lower BLOCKS of the matrix with identity
//               diagonal blocks (the L factor of a block ILU(0), kernels/ilu_isai/ilu_block.hpp: the stored
//               diagonal blocks hold U_ii and are ignored);
//   block_upper M ~ U^{-1}, U = the diagonal and upper blocks, the diagonal blocks dense (the U
//               factor of a block ILU(0)).
// Block pattern: S_b = S(|T_b|^k), k >= 1, with T_b the block pattern of the kind's triangle
// (blocks (R, C) with C <= R for unit_lower and unit_block_lower, C >= R for upper and
// block_upper, all for general), diagonal blocks included. M has the BSR pattern S_b with full bs x bs blocks.
// Right ISAI, block column by block column: for block column j with block rows J = {R : (R, j)
// in S_b} (sorted) and the m = |J| bs scalar rows of those blocks,
//   T(J, J) X = E_j,      X = M(J, j)  (m x bs),
// with T(J, J) the scalar m x m submatrix of the kind's T (for unit_lower the diagonal is 1 and
// the upper entries of the diagonal blocks are 0; for upper the strictly lower entries of the
// diagonal blocks are 0; for unit_block_lower the diagonal blocks are the identity; for
// block_upper they are taken whole) and E_j the bs columns of the identity at block j's rows. Hence
// (T M - I)(i, c) = 0 for every scalar (i, c) inside a block of S_b.
// With dense blocks this is the same M as the scalar view (kernels/ilu_isai/isai.hpp) of the scalar
// expansion, whose pattern S(|T|^k) is the scalar expansion of S_b restricted to the triangle;
// the block view solves one system with bs right-hand sides per block column instead of bs
// systems, and M is applied by the BSR SpMV.
// Triangular kinds (unit_lower, upper, unit_block_lower): plain substitution (no pivoting).
// general and block_upper (whose dense diagonal blocks need pivoting): Gaussian elimination with
// partial pivoting by rows (largest |entry| in the column, the lowest row on ties).
#pragma once

#include "kernels/common.hpp"

#include <vector>

namespace blockres::kernels {

enum class IsaiKind { unit_lower, upper, general, unit_block_lower, block_upper };

// Storage of the values of a matrix with a square BSR pattern (sorted block columns, a diagonal
// block in every block row):
//   bsr          block q (position in col_ind), entry (a, c) at val[q*bs*bs + a*bs + c]
//                (the BsrView order);
//   scalar_rows  the scalar CSR expansion of kernels/spmv/bsr_to_csr.hpp (the ILU(0) factors of
//                Ilu0Preconditioner): scalar row R*bs + a lists the blocks of block row R in
//                order, bs entries each, so block q of block row R, entry (a, c) is at
//                val[row_ptr[R]*bs*bs + a*len*bs + (q - row_ptr[R])*bs + c],
//                len = row_ptr[R+1] - row_ptr[R].
enum class BlockStorage { bsr, scalar_rows };

template <class T>
struct BlockValuesView {
  index_t nrows = 0;                 // block rows (= block columns)
  int bs = 1;
  const index_t* row_ptr = nullptr;  // nrows + 1 (block pattern)
  const index_t* col_ind = nullptr;  // block columns, sorted per row
  T* val = nullptr;
  BlockStorage storage = BlockStorage::bsr;
};

// Host pattern analysis (host arrays of the block pattern). Throws std::invalid_argument (naming
// the block row) when power < 1, bs < 1, or the pattern is not square/sorted/unique with a
// diagonal block in every row.
struct IsaiBlockPattern {
  IsaiKind kind = IsaiKind::general;
  int power = 1;
  int bs = 1;
  index_t nrows = 0;
  std::vector<index_t> row_ptr, col;               // S_b by block rows: M's BSR pattern
  std::vector<index_t> col_ptr, row_ind, bsr_pos;  // S_b by block columns, rows sorted; bsr_pos:
                                                   //   position of each block in col / M's blocks
  std::vector<index_t> short_cols;                 // block columns with m = entries * bs <= 32, by
  std::vector<index_t> short_bucket_ptr;           //   lane-group width: short_cols[short_bucket_ptr[b]
                                                   //   .. [b + 1]) have m <= 4 << b (and more than half
                                                   //   of it for b > 0), in increasing order; 5 entries
  std::vector<index_t> long_cols;                  // the others (m > 32)
  index_t max_long_m = 0;                          // largest m of the long columns (0: none)
  index_t max_short_m = 0;                         // largest m of the short columns (0: none)
  index_t nnzb() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
};
IsaiBlockPattern isai_block_pattern(IsaiKind kind, index_t nrows, int bs, const index_t* row_ptr,
                                    const index_t* col_ind, int power);

// The argument checks of isai_block_substitute (both backends): the kind, F's dimensions and BSR
// storage, dinv for block_upper. Throws std::invalid_argument naming fn.
void check_isai_substitute(const IsaiBlockPattern& p, const BlockValuesView<const double>& F, const double* dinv,
                           const char* fn);

namespace cpu {
// M's values (nnzb * bs * bs, row-major blocks in p's BSR order) from the matrix values A, whose
// block pattern is the one p was built from. Every value of M is written. Returns 0, or j + 1
// for the smallest block column j whose system has a zero or non-finite pivot (its values are
// then not finite or meaningless).
int isai_block_generate(const IsaiBlockPattern& p, BlockValuesView<const double> A, double* m_val);

// The ISAI of a block ILU(0)'s factors (p.kind unit_block_lower or block_upper) by block
// substitution instead of the dense m x m solve: T(J, J) is block triangular, its diagonal blocks
// the identity (L) or U_RR, whose inverses the factorisation already holds. Per block column j the
// blocks R of J in substitution order (increasing for L, where J[0] = j; decreasing for U, where
// the last of J is j), with the blocks S of J already done:
//   G_R = E_R - sum_S T_RS X_S   (E_R = I at R = j, else 0; the S in increasing order),
//   X_R = G_R (L),   X_R = dinv_R G_R (U),
// each entry (a, c) a chain of fma(-T(a, k), X_S(k, c), .) over S then k, and for U
// fma(dinv_R(a, k), G(k, c), .) over k from 0: the operation order of the CUDA kernel, so the two
// agree bit for bit. No pivoting and no m x m scratch: O(|J|^2 bs^3) per column instead of
// O(m^3) = O(|J|^3 bs^3). The same M as isai_block_generate's to rounding (the systems are the
// same). F: the factors in BSR storage (block_ilu0_factor's or the sweeps' in-place layout: L's
// strictly lower blocks, U's diagonal and upper blocks); dinv: nrows * bs * bs doubles,
// dinv[R*bs*bs + a*bs + c] = (U_RR^{-1})(a, c) (read for block_upper only; may be null for
// unit_block_lower). The factorisation checked the diagonal blocks; nothing is checked here.
void isai_block_substitute(const IsaiBlockPattern& p, BlockValuesView<const double> F, const double* dinv,
                           double* m_val);
}  // namespace cpu

// Largest block size of isai_block_substitute (the CUDA kernel keeps one bs x bs block of doubles
// per column in 48 KB of shared memory); callers take isai_block_generate above it, on both
// backends alike.
constexpr int isai_substitute_max_bs = 78;

namespace cuda {
// Device copies of a pattern's arrays.
struct IsaiBlockDevicePattern {
  const IsaiBlockPattern* host = nullptr;
  const index_t* col_ptr = nullptr;
  const index_t* row_ind = nullptr;
  const index_t* bsr_pos = nullptr;
  const index_t* short_cols = nullptr;
  const index_t* long_cols = nullptr;
};
// Doubles of device scratch memory isai_block_generate needs for p's long columns (0 when there
// are none). Bounded: the long columns are processed by a limited number of resident thread
// blocks, each reusing its own slice.
size64_t isai_block_scratch_doubles(const IsaiBlockPattern& p);
// Asynchronous on `s`. `scratch`: isai_block_scratch_doubles(*p.host) doubles (may be null when
// 0). `info` (device, one int) receives 0 or cpu::isai_block_generate's value.
void isai_block_generate(stream_t s, const IsaiBlockDevicePattern& p, BlockValuesView<const double> A,
                         double* m_val, double* scratch, int* info);
// cpu::isai_block_substitute on the device, asynchronous on `s`, one launch (no scratch): a team
// of threads per block column (the next power of two >= bs^2, at most 256; several columns per
// warp for bs^2 <= 32), each thread owning entries of the bs x bs block being computed.
void isai_block_substitute(stream_t s, const IsaiBlockDevicePattern& p, BlockValuesView<const double> F,
                           const double* dinv, double* m_val);
}  // namespace cuda

}  // namespace blockres::kernels
