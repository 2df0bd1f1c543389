#include "kernels/halo/halo.hpp"

#include <algorithm>

namespace blockres::kernels::cpu {

void halo_pack(const double* x, const index_t* ids, index_t n, int bs, double* out)
{
  const size64_t b = bs;
#pragma omp parallel for schedule(static) if (size64_t(n) * b > 65536)
  for (index_t i = 0; i < n; ++i) std::copy_n(x + size64_t(ids[i]) * b, b, out + size64_t(i) * b);
}

}  // namespace blockres::kernels::cpu
