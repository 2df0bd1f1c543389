// Block-Jacobi helper kernels: copy BSR blocks into dense Jacobi blocks, count failed blocks.
// (The factorisations themselves are the batched kernels: batched_gh.hpp, batched_lu.hpp.)
#pragma once

#include "kernels/common.hpp"

namespace blockres::kernels {

// scatter_blocks (block-Jacobi extraction): for listed blocks e = 0..n-1 and 0 <= i, j < bs,
//   dst[dst_off[e] + i*ld[e] + j] = values[src[e]*bs*bs + i*bs + j]
// (copies BSR blocks into dense matrices with leading dimension ld[e]; other entries of dst are
// left alone). extract_diagonal (point Jacobi): d[r*bs + i] = entry (i, i) of block diag_pos[r].
// count_nonzero: the number of entries of info that are not 0.
namespace cpu {
void extract_diagonal(index_t nrows, int bs, const index_t* diag_pos, const double* values, double* d);
void scatter_blocks(index_t n, int bs, const index_t* src, const size64_t* dst_off, const int* ld, const double* values,
                    double* dst);
index_t count_nonzero(index_t n, const int* info);
}  // namespace cpu
namespace cuda {
void extract_diagonal(stream_t s, index_t nrows, int bs, const index_t* diag_pos, const double* values, double* d);
void scatter_blocks(stream_t s, index_t n, int bs, const index_t* src, const size64_t* dst_off, const int* ld,
                    const double* values, double* dst);
// Needs a device workspace of one index_t; synchronises to return the count.
index_t count_nonzero(stream_t s, index_t n, const int* info, index_t* workspace);
}  // namespace cuda

}  // namespace blockres::kernels
