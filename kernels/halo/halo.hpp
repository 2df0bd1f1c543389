// Halo kernels (issue 33): the owned entries a rank sends its neighbours, gathered into one contiguous buffer.
// CPU reference and CUDA version.
#pragma once

#include "kernels/common.hpp"

namespace blockres::kernels {

// halo_pack: out[i bs + c] = x[ids[i] bs + c] for i < n, c < bs (ids: owned local ids, any order, repeats allowed).
namespace cpu {
void halo_pack(const double* x, const index_t* ids, index_t n, int bs, double* out);
}  // namespace cpu

namespace cuda {
void halo_pack(stream_t s, const double* x, const index_t* ids, index_t n, int bs, double* out);
}  // namespace cuda

}  // namespace blockres::kernels
