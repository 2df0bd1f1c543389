// Halo kernels (issue 33): the owned entries a rank sends its neighbours, gathered into one contiguous buffer.
// CPU reference and CUDA version.
#pragma once

#include "kernels/common.hpp"

namespace blockres::kernels {

// halo_pack: out[i bs + c] = x[ids[i] bs + c] for i < n, c < bs (ids: owned local ids, any order, repeats allowed).
// hcat_rows: the values of the rows of [D | O], two block-CSR matrices over the same n rows with bb values a block
// (a distributed matrix's owned x owned and owned x ghost parts; the result is its "local form", owned rows over
// owned then ghost columns): row i's blocks of D, then its blocks of O, at out + (d_ptr[i] + o_ptr[i]) bb.
// o_ptr == nullptr: O has no blocks (out = D's values).
// lump_ghost_columns: a scalar matrix in local form (n rows; columns >= n_local are ghosts) filtered to its owned
// columns with the same row sums: out = values, except that every ghost entry is 0 and their sum is added to the
// row's diagonal entry (column == row; a row without one keeps its entries and loses the sum). The matrix that
// smooths a rank-local aggregation prolongator (amg_distributed.hpp) so that constants stay interpolated at the
// subdomain boundary.
// sum_ranks: out[i] = parts[i] + parts[k + i] + ... + parts[(P - 1) k + i], added in that order (P >= 1 ranks'
// partial sums of k values, rank-major, as an all-gather leaves them): the communicator's reproducible sum
// (dist::Communicator::sum) on the device, the same bits as the host's. out may be parts (rank 0's slots).
namespace cpu {
void halo_pack(const double* x, const index_t* ids, index_t n, int bs, double* out);
void hcat_rows(index_t n, int bb, const index_t* d_ptr, const double* d, const index_t* o_ptr, const double* o,
               double* out);
void lump_ghost_columns(index_t n, index_t n_local, const index_t* row_ptr, const index_t* col_ind,
                        const double* values, double* out);
void sum_ranks(int P, int k, const double* parts, double* out);
}  // namespace cpu

namespace cuda {
void halo_pack(stream_t s, const double* x, const index_t* ids, index_t n, int bs, double* out);
void hcat_rows(stream_t s, index_t n, int bb, const index_t* d_ptr, const double* d, const index_t* o_ptr,
               const double* o, double* out);
void lump_ghost_columns(stream_t s, index_t n, index_t n_local, const index_t* row_ptr, const index_t* col_ind,
                        const double* values, double* out);
void sum_ranks(stream_t s, int P, int k, const double* parts, double* out);
}  // namespace cuda

}  // namespace blockres::kernels
