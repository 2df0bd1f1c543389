// BLAS-1 CPU reference kernels against hand-computed values and across thread counts.
#include "kernels/blas1/blas1.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace blockres;

TEST(Blas1Cpu, HandValues)
{
  std::vector<double> x{1, 2, 3}, y{4, 5, 6}, z{7, 8, 9};
  EXPECT_DOUBLE_EQ(kernels::cpu::dot(3, x.data(), y.data()), 32.0);
  kernels::cpu::axpby(3, 2.0, x.data(), -1.0, y.data());  // y = 2x - y
  EXPECT_EQ(y, (std::vector<double>{-2, -1, 0}));
  kernels::cpu::axpbypcz(3, 1.0, x.data(), 1.0, y.data(), 2.0, z.data());  // z = x + y + 2z
  EXPECT_EQ(z, (std::vector<double>{13, 17, 21}));
  std::vector<double> w(3, std::numeric_limits<double>::quiet_NaN());
  kernels::cpu::axpby(3, 3.0, x.data(), 0.0, w.data());  // beta 0: NaN in w must not leak
  EXPECT_EQ(w, (std::vector<double>{3, 6, 9}));
  kernels::cpu::fill(3, -0.5, w.data());
  EXPECT_EQ(w, (std::vector<double>{-0.5, -0.5, -0.5}));
}

// The CPU reductions sum in an order fixed by the length (kernels/ordered_sum_cpu.hpp): the same
// bits on 1, 2, 3 or 7 threads, so a CPU run reproduces its stored baseline on any machine.
TEST(Blas1Cpu, ReductionsDoNotDependOnTheThreadCount)
{
  std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size64_t n : {size64_t(8191), size64_t(100003), size64_t(1) << 20}) {
    std::vector<double> x(n), y(n), p(n), t(n), rh(n);
    for (size64_t i = 0; i < n; ++i) x[i] = u(rng), y[i] = u(rng), p[i] = u(rng), t[i] = u(rng), rh[i] = u(rng);
    const double* cols[3] = {x.data(), p.data(), t.data()};
    struct Out {
      double dot, dots[3], norm, bicg[2], xsum;
    };
    auto run = [&](int threads) {
      omp_set_num_threads(threads);
      Out o{};
      o.dot = kernels::cpu::dot(n, x.data(), y.data());
      kernels::cpu::dots(n, 3, cols, y.data(), o.dots);
      std::vector<double> yy = y, xx = x, rr = y;
      o.norm = kernels::cpu::axpby_norm2(n, 0.7, x.data(), -1.3, yy.data());
      kernels::cpu::bicgstab_update(n, 0.4, p.data(), -0.6, rr.data(), rr.data(), t.data(), rh.data(), xx.data(), rr.data(),
                           o.bicg);
      o.xsum = kernels::cpu::dot(n, xx.data(), rr.data());
      return o;
    };
    const Out ref = run(1);
    for (int threads : {2, 3, 7}) {
      const Out o = run(threads);
      EXPECT_EQ(o.dot, ref.dot) << n << " on " << threads << " threads";
      for (int j = 0; j < 3; ++j) EXPECT_EQ(o.dots[j], ref.dots[j]) << n << " on " << threads << " threads";
      EXPECT_EQ(o.norm, ref.norm) << n << " on " << threads << " threads";
      EXPECT_EQ(o.bicg[0], ref.bicg[0]) << n << " on " << threads << " threads";
      EXPECT_EQ(o.bicg[1], ref.bicg[1]) << n << " on " << threads << " threads";
      EXPECT_EQ(o.xsum, ref.xsum) << n << " on " << threads << " threads";
    }
    // And the value is the sum (against a long-double loop, to rounding).
    long double exact = 0;
    for (size64_t i = 0; i < n; ++i) exact += static_cast<long double>(x[i]) * y[i];
    EXPECT_NEAR(ref.dot, static_cast<double>(exact), 1e-13 * std::sqrt(double(n)));
  }
  omp_set_num_threads(omp_get_num_procs());
}

// The bench suite's FP64 ceiling kernel: each chain against its closed form a_n = a* + (a_0 - a*) m^n
// (a* = c / (1 - m) = 0.25), every lane written (the output poisoned first), odd lane counts.
TEST(Fp64Peak, ChainsFollowTheirClosedForm)
{
  constexpr double m = 1.0 - 1.0 / 1024.0, c = 1.0 / 4096.0, fixed = c / (1.0 - m);
  for (size64_t lanes : {1, 7, 131}) {
    for (int iterations : {0, 1, 33, 4097}) {
      std::vector<double> out(lanes, std::numeric_limits<double>::quiet_NaN());
      kernels::cpu::fp64_peak(lanes, iterations, out.data());
      for (size64_t k = 0; k < lanes; ++k) {
        double want = 0.0;
        for (int j = 0; j < kernels::cpu::fp64_peak_chains; ++j) {
          const double a0 = 1.0 + double(k % 97) / 1024.0 + double(j) / 4096.0;
          want += fixed + (a0 - fixed) * std::pow(m, iterations);
        }
        EXPECT_NEAR(out[k], want, 1e-12 * want) << lanes << " lanes, " << iterations << " iterations, lane " << k;
      }
    }
  }
  EXPECT_EQ(kernels::cpu::fp64_peak_flops(3, 5), 2.0 * kernels::cpu::fp64_peak_chains * 15);
}
