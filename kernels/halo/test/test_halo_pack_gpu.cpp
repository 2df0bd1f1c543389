// The CUDA halo pack against its CPU reference on fresh random input: odd counts, block sizes 1..64, ids in any order
// with repeats, the output poisoned with NaN first (every entry must be written). Label `gpu`.
#include "kernels/halo/halo.hpp"
#include "linalg/test/gpu_test_util.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <span>

using namespace blockres;

TEST(HaloPackGpu, MatchesTheCpuReference)
{
  const ExecPtr gpu = test::backends().gpu;
  for (int bs : {1, 2, 3, 5, 8, 17, 33, 64}) {
    for (index_t owned : {1, 7, 1001}) {
      const index_t n = index_t(test::rng()() % 3000);  // may be 0
      std::vector<index_t> ids(static_cast<std::size_t>(n));
      for (index_t& i : ids) i = index_t(test::rng()() % std::uint64_t(owned));
      const std::vector<double> x = test::random_vector(size64_t(owned) * bs);
      std::vector<double> want(std::size_t(n) * std::size_t(bs), std::nan(""));
      kernels::cpu::halo_pack(x.data(), ids.data(), n, bs, want.data());
      const Array<double> dx(gpu, std::span<const double>(x));
      const Array<index_t> dids(gpu, std::span<const index_t>(ids));
      Array<double> out(gpu, size64_t(n) * bs);
      std::vector<double> poison(want.size(), std::nan(""));
      out.copy_from_host(poison);
      kernels::cuda::halo_pack(gpu->stream(), dx.data(), dids.data(), n, bs, out.data());
      const std::vector<double> got = out.to_host();
      for (std::size_t e = 0; e < want.size(); ++e) {
        ASSERT_FALSE(std::isnan(want[e]));
        ASSERT_EQ(std::bit_cast<std::uint64_t>(got[e]), std::bit_cast<std::uint64_t>(want[e]))
            << "bs " << bs << " n " << n << " entry " << e;
      }
    }
  }
}
