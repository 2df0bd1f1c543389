// CUDA BSR SpMV, first version: one thread per scalar row, block size a template
// parameter for the small sizes and a run-time loop otherwise.
#include "kernels/bsrmv.hpp"
#include "kernels/cuda_check.cuh"
#include "kernels/launch.cuh"

namespace blockres::kernels::cuda {

namespace {

// Thread t computes scalar row t: block row t / bs, row t % bs inside the block.
template <int BS>
__global__ void bsrmv_row_kernel(index_t nrows, int bs_rt, const index_t* __restrict__ row_ptr,
                                 const index_t* __restrict__ col_ind, const double* __restrict__ values,
                                 double alpha, const double* __restrict__ x, double beta, double* __restrict__ y)
{
  const int bs = BS > 0 ? BS : bs_rt;
  const size64_t t = blockIdx.x * size64_t(blockDim.x) + threadIdx.x;
  if (t >= size64_t(nrows) * bs) return;
  const index_t r = static_cast<index_t>(t / bs);
  const int i = static_cast<int>(t % bs);
  double sum = 0.0;
  for (index_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
    const double* blk = values + size64_t(k) * bs * bs + size64_t(i) * bs;
    const double* xc = x + size64_t(__ldg(col_ind + k)) * bs;
    if constexpr (BS > 0) {
#pragma unroll
      for (int j = 0; j < BS; ++j) sum += blk[j] * __ldg(xc + j);
    } else {
      for (int j = 0; j < bs; ++j) sum += blk[j] * __ldg(xc + j);
    }
  }
  y[t] = (beta == 0.0) ? alpha * sum : alpha * sum + beta * y[t];
}

template <int BS>
void launch(stream_t s, const BsrView<const double>& A, double alpha, const double* x, double beta, double* y)
{
  const size64_t n = size64_t(A.nrows) * A.bs;
  const unsigned grid = static_cast<unsigned>((n + cuda_detail::default_block - 1) / cuda_detail::default_block);
  bsrmv_row_kernel<BS><<<grid, cuda_detail::default_block, 0, s>>>(A.nrows, A.bs, A.row_ptr, A.col_ind, A.values,
                                                                    alpha, x, beta, y);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace

void bsrmv(stream_t s, const BsrView<const double>& A, double alpha, const double* x, double beta, double* y)
{
  if (A.nrows <= 0) return;
  switch (A.bs) {  // the one place where the run-time block size becomes a template parameter
    case 1: return launch<1>(s, A, alpha, x, beta, y);
    case 2: return launch<2>(s, A, alpha, x, beta, y);
    case 3: return launch<3>(s, A, alpha, x, beta, y);
    case 4: return launch<4>(s, A, alpha, x, beta, y);
    default: return launch<0>(s, A, alpha, x, beta, y);
  }
}

}  // namespace blockres::kernels::cuda
