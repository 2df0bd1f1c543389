// The CUDA halo pack and row concatenation against their CPU references on fresh random input: odd counts, block sizes 1..64, ids in any order
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

// hcat_rows: random row lengths (empty rows included), blocks of 1..64 values, with and without the second part;
// the output poisoned with NaN first.
TEST(HcatRowsGpu, MatchesTheCpuReference)
{
  const ExecPtr gpu = test::backends().gpu;
  for (int bb : {1, 4, 9, 64})
    for (index_t n : {1, 7, 1001})
      for (int with_o = 0; with_o < 2; ++with_o) {
        std::vector<index_t> dp(1, 0), op(1, 0);
        for (index_t i = 0; i < n; ++i) {
          dp.push_back(dp.back() + index_t(test::rng()() % 9));
          op.push_back(op.back() + index_t(test::rng()() % 4));
        }
        const std::vector<double> d = test::random_vector(size64_t(dp.back()) * bb);
        const std::vector<double> o = test::random_vector(size64_t(op.back()) * bb);
        const size64_t total = size64_t(dp.back() + (with_o ? op.back() : 0)) * bb;
        std::vector<double> want(total, std::nan(""));
        kernels::cpu::hcat_rows(n, bb, dp.data(), d.data(), with_o ? op.data() : nullptr, o.data(), want.data());
        // The reference against the definition: row i's D blocks, then its O blocks.
        size64_t at = 0;
        for (index_t i = 0; i < n; ++i) {
          for (size64_t e = size64_t(dp[i]) * bb; e < size64_t(dp[i + 1]) * bb; ++e) ASSERT_EQ(want[at++], d[e]);
          if (with_o)
            for (size64_t e = size64_t(op[i]) * bb; e < size64_t(op[i + 1]) * bb; ++e) ASSERT_EQ(want[at++], o[e]);
        }
        ASSERT_EQ(at, total);
        const Array<index_t> ddp(gpu, std::span<const index_t>(dp)), dop(gpu, std::span<const index_t>(op));
        const Array<double> dd(gpu, std::span<const double>(d)), dov(gpu, std::span<const double>(o));
        Array<double> out(gpu, total);
        out.copy_from_host(std::vector<double>(total, std::nan("")));
        kernels::cuda::hcat_rows(gpu->stream(), n, bb, ddp.data(), dd.data(), with_o ? dop.data() : nullptr,
                                 dov.data(), out.data());
        const std::vector<double> got = out.to_host();
        for (size64_t e = 0; e < total; ++e)
          ASSERT_EQ(std::bit_cast<std::uint64_t>(got[e]), std::bit_cast<std::uint64_t>(want[e]))
              << "bb " << bb << " n " << n << " entry " << e;
      }
}

// lump_ghost_columns: random local-form rows (columns owned or ghost, the diagonal present or not), the output
// poisoned; the reference also against its definition (row sums kept where the diagonal is present, ghosts zero).
TEST(LumpGhostColumnsGpu, MatchesTheCpuReference)
{
  const ExecPtr gpu = test::backends().gpu;
  for (index_t n : {1, 9, 1003}) {
    const index_t ghosts = index_t(test::rng()() % 50);
    std::vector<index_t> rp(1, 0), ci;
    for (index_t i = 0; i < n; ++i) {
      if (test::rng()() % 5 != 0) ci.push_back(i);  // the diagonal, mostly
      for (int k = int(test::rng()() % 7); k > 0; --k) ci.push_back(index_t(test::rng()() % std::uint64_t(n + ghosts)));
      rp.push_back(index_t(ci.size()));
    }
    const std::vector<double> v = test::random_vector(ci.size());
    std::vector<double> want(ci.size(), std::nan(""));
    kernels::cpu::lump_ghost_columns(n, n, rp.data(), ci.data(), v.data(), want.data());
    for (index_t i = 0; i < n; ++i) {
      double before = 0.0, after = 0.0;
      bool has_diag = false;
      for (index_t q = rp[i]; q < rp[i + 1]; ++q) {
        before += v[std::size_t(q)], after += want[std::size_t(q)];
        has_diag = has_diag || ci[std::size_t(q)] == i;
        if (ci[std::size_t(q)] >= n) ASSERT_EQ(want[std::size_t(q)], 0.0);
      }
      if (has_diag) ASSERT_NEAR(after, before, 1e-12 * (1.0 + std::abs(before)));
    }
    const Array<index_t> drp(gpu, std::span<const index_t>(rp)), dci(gpu, std::span<const index_t>(ci));
    const Array<double> dv(gpu, std::span<const double>(v));
    Array<double> out(gpu, ci.size());
    out.copy_from_host(std::vector<double>(ci.size(), std::nan("")));
    kernels::cuda::lump_ghost_columns(gpu->stream(), n, n, drp.data(), dci.data(), dv.data(), out.data());
    const std::vector<double> got = out.to_host();
    for (std::size_t e = 0; e < ci.size(); ++e)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got[e]), std::bit_cast<std::uint64_t>(want[e])) << "n " << n << " entry " << e;
  }
}

// sum_ranks: 1..9 ranks' partials of 1..1000 values (magnitudes far apart, so the order of the additions shows in
// the bits), into a NaN-poisoned output and in place over rank 0's slots; the reference against its definition.
TEST(SumRanksGpu, MatchesTheCpuReferenceBitForBit)
{
  const ExecPtr gpu = test::backends().gpu;
  for (int P : {1, 2, 3, 4, 9})
    for (int k : {1, 5, 33, 1000}) {
      std::vector<double> parts = test::random_vector(size64_t(P) * k);
      for (std::size_t e = 0; e < parts.size(); ++e) parts[e] *= std::ldexp(1.0, int(test::rng()() % 80) - 40);
      std::vector<double> want(std::size_t(k), std::nan(""));
      kernels::cpu::sum_ranks(P, k, parts.data(), want.data());
      for (int i = 0; i < k; ++i) {  // the definition: rank order, left to right
        double s = parts[std::size_t(i)];
        for (int r = 1; r < P; ++r) s += parts[std::size_t(r) * std::size_t(k) + std::size_t(i)];
        ASSERT_EQ(std::bit_cast<std::uint64_t>(want[std::size_t(i)]), std::bit_cast<std::uint64_t>(s));
      }
      for (int in_place = 0; in_place < 2; ++in_place) {
        Array<double> dp(gpu, std::span<const double>(parts));
        Array<double> out(gpu, std::span<const double>(std::vector<double>(std::size_t(k), std::nan(""))));
        double* dst = in_place ? dp.data() : out.data();
        kernels::cuda::sum_ranks(gpu->stream(), P, k, dp.data(), dst);
        const std::vector<double> got = in_place ? dp.to_host() : out.to_host();
        for (int i = 0; i < k; ++i)
          ASSERT_EQ(std::bit_cast<std::uint64_t>(got[std::size_t(i)]), std::bit_cast<std::uint64_t>(want[std::size_t(i)]))
              << "P " << P << " k " << k << " entry " << i << (in_place ? " in place" : "");
      }
    }
}
