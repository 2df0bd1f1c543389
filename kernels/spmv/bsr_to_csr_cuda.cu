// CUDA BSR -> CSR expansion: one thread per (block, row of the block), writing bs entries.
#include "kernels/spmv/bsr_to_csr.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/launch.cuh"

namespace blockres::kernels::cuda {

namespace {

// Thread per (block k, row i): needs the block row of k, found by binary search in row_ptr.
__global__ void expand_kernel(BsrView<const double> A, index_t* __restrict__ csr_row_ptr, index_t* __restrict__ csr_col,
                              double* __restrict__ csr_val)
{
  const int bs = A.bs;
  const size64_t t = blockIdx.x * size64_t(blockDim.x) + threadIdx.x;
  const index_t nnzb = A.row_ptr[A.nrows];
  if (t >= size64_t(nnzb) * bs) return;
  const index_t k = static_cast<index_t>(t / bs);
  const int i = static_cast<int>(t % bs);
  index_t lo = 0, hi = A.nrows;  // last r with row_ptr[r] <= k
  while (hi - lo > 1) {
    const index_t mid = lo + (hi - lo) / 2;
    if (A.row_ptr[mid] <= k) lo = mid; else hi = mid;
  }
  const index_t r = lo, kb = A.row_ptr[r], len = A.row_ptr[r + 1] - kb;
  const size64_t bb = size64_t(bs) * bs;
  const size64_t start = size64_t(kb) * bb + size64_t(i) * len * bs;
  if (k == kb) csr_row_ptr[size64_t(r) * bs + i] = static_cast<index_t>(start);
  for (int c = 0; c < bs; ++c) {
    const size64_t out = start + size64_t(k - kb) * bs + c;
    csr_col[out] = A.col_ind[k] * bs + c;
    csr_val[out] = A.values[size64_t(k) * bb + size64_t(i) * bs + c];
  }
}

// Rows without blocks get their row pointer here (the expansion above only sees blocks).
__global__ void empty_rows_kernel(BsrView<const double> A, index_t* __restrict__ csr_row_ptr)
{
  const size64_t t = blockIdx.x * size64_t(blockDim.x) + threadIdx.x;
  const int bs = A.bs;
  if (t > size64_t(A.nrows) * bs) return;
  const size64_t r = t / bs;
  if (t == size64_t(A.nrows) * bs) {
    csr_row_ptr[t] = static_cast<index_t>(size64_t(A.row_ptr[A.nrows]) * bs * bs);
  } else if (A.row_ptr[r] == A.row_ptr[r + 1]) {
    csr_row_ptr[t] = static_cast<index_t>(size64_t(A.row_ptr[r]) * bs * bs);
  }
}

}  // namespace

void bsr_to_csr(stream_t s, const BsrView<const double>& A, index_t* csr_row_ptr, index_t* csr_col, double* csr_val)
{
  if (A.nrows <= 0) return;
  const int block = cuda_detail::default_block;
  index_t nnzb = 0;  // row_ptr lives on the device
  BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(&nnzb, A.row_ptr + A.nrows, sizeof(index_t), cudaMemcpyDeviceToHost, s));
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
  check_scalar_view_fits_int32("bsr_to_csr", A.nrows, A.ncols, A.bs, nnzb);
  const size64_t rows = size64_t(A.nrows) * A.bs + 1;
  empty_rows_kernel<<<static_cast<unsigned>((rows + block - 1) / block), block, 0, s>>>(A, csr_row_ptr);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  const size64_t n = size64_t(nnzb) * A.bs;
  if (n == 0) return;
  expand_kernel<<<static_cast<unsigned>((n + block - 1) / block), block, 0, s>>>(A, csr_row_ptr, csr_col, csr_val);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::kernels::cuda
