#include "kernels/halo/halo.hpp"

#include <algorithm>

namespace blockres::kernels::cpu {

void halo_pack(const double* x, const index_t* ids, index_t n, int bs, double* out)
{
  const size64_t b = bs;
#pragma omp parallel for schedule(static) if (size64_t(n) * b > 65536)
  for (index_t i = 0; i < n; ++i) std::copy_n(x + size64_t(ids[i]) * b, b, out + size64_t(i) * b);
}

void hcat_rows(index_t n, int bb, const index_t* d_ptr, const double* d, const index_t* o_ptr, const double* o,
               double* out)
{
  const size64_t b = bb;
#pragma omp parallel for schedule(static) if (n > 16384)
  for (index_t i = 0; i < n; ++i) {
    const size64_t start = size64_t(d_ptr[i]) + (o_ptr ? size64_t(o_ptr[i]) : 0);
    const size64_t nd = size64_t(d_ptr[i + 1] - d_ptr[i]);
    std::copy_n(d + size64_t(d_ptr[i]) * b, nd * b, out + start * b);
    if (o_ptr)
      std::copy_n(o + size64_t(o_ptr[i]) * b, size64_t(o_ptr[i + 1] - o_ptr[i]) * b, out + (start + nd) * b);
  }
}

void lump_ghost_columns(index_t n, index_t n_local, const index_t* row_ptr, const index_t* col_ind,
                        const double* values, double* out)
{
#pragma omp parallel for schedule(static) if (n > 16384)
  for (index_t i = 0; i < n; ++i) {
    double ghost = 0.0;
    index_t diag = -1;
    for (index_t q = row_ptr[i]; q < row_ptr[i + 1]; ++q) {
      const index_t c = col_ind[q];
      if (c >= n_local) {
        ghost += values[q];
        out[q] = 0.0;
      } else {
        out[q] = values[q];
        if (c == i) diag = q;
      }
    }
    if (diag >= 0) out[diag] += ghost;
  }
}

void sum_ranks(int P, int k, const double* parts, double* out)
{
  for (int i = 0; i < k; ++i) {
    double s = parts[i];
    for (int r = 1; r < P; ++r) s += parts[std::size_t(r) * std::size_t(k) + std::size_t(i)];
    out[i] = s;
  }
}

}  // namespace blockres::kernels::cpu
