// Shared definitions for kernels/: host/device qualifiers, stream handle, index types.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define BLOCKRES_HD __host__ __device__ __forceinline__
#else
#define BLOCKRES_HD inline
#endif

// Host headers stay free of CUDA: a stream is an opaque pointer (this is exactly
// CUDA's own definition of cudaStream_t, so the two convert without casts).
struct CUstream_st;
struct cublasContext;  // likewise cublasHandle_t

namespace blockres {

using stream_t = CUstream_st*;
using blas_handle_t = cublasContext*;
using index_t = std::int32_t;  // block row / block column indices
using size64_t = std::int64_t; // offsets into value arrays (blocks * bs * bs may pass 2^31)

// Read-only view of a block-sparse row (BSR) matrix. Blocks are stored row-major
// (block b, entry (r, c) at values[b*bs*bs + r*bs + c]); rows are block rows.
template <class T>
struct BsrView {
  index_t nrows = 0;          // number of block rows
  index_t ncols = 0;          // number of block columns
  int bs = 1;                 // block size
  const index_t* row_ptr = nullptr;  // nrows + 1
  const index_t* col_ind = nullptr;  // nnzb, sorted within a row
  T* values = nullptr;               // nnzb * bs * bs
  index_t nnzb() const { return row_ptr ? row_ptr[nrows] : 0; }
};

}  // namespace blockres
