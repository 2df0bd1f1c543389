// CPU references of the block-Jacobi helper kernels.
#include "kernels/batched/block_diag.hpp"
#include "kernels/parallel_cpu.hpp"

namespace blockres::kernels::cpu {

void scatter_blocks(index_t n, int bs, const index_t* src, const size64_t* dst_off, const int* ld, const double* values,
                    double* dst)
{
  const size64_t bb = size64_t(bs) * bs;
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(n) * bs * bs))
  for (index_t e = 0; e < n; ++e)
    for (int i = 0; i < bs; ++i)
      for (int j = 0; j < bs; ++j) dst[dst_off[e] + size64_t(i) * ld[e] + j] = values[size64_t(src[e]) * bb + i * bs + j];
}

void extract_diagonal(index_t nrows, int bs, const index_t* diag_pos, const double* values, double* d)
{
  const size64_t bb = size64_t(bs) * bs;
  for (index_t r = 0; r < nrows; ++r)
    for (int i = 0; i < bs; ++i) d[size64_t(r) * bs + i] = values[size64_t(diag_pos[r]) * bb + i * (bs + 1)];
}

index_t count_nonzero(index_t n, const int* info)
{
  index_t c = 0;
  for (index_t e = 0; e < n; ++e) c += info[e] != 0;
  return c;
}

}  // namespace blockres::kernels::cpu
