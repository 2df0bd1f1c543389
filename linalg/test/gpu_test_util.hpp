// Shared pieces of the CUDA-against-CPU tests: one CPU and one CUDA executor per test binary, a
// matrix with one zeroed block row, and a GMRES run on both backends with matching preconditioners.
#pragma once

#include "linalg/executor.hpp"
#include "linalg/krylov.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace blockres::test {

struct Backends {
  ExecPtr cpu = Executor::create_cpu();
  ExecPtr gpu = Executor::create_cuda(0);
};

inline Backends& backends()
{
  static Backends b;
  return b;
}

// Every entry of block row `row` set to zero: a zero pivot / singular local system at that row.
inline void zero_block_row(TestMatrix& m, index_t row)
{
  const std::size_t bs2 = std::size_t(m.bs) * m.bs;
  for (index_t k = m.pattern.row_ptr[row]; k < m.pattern.row_ptr[row + 1]; ++k)
    for (std::size_t i = 0; i < bs2; ++i) m.values[size64_t(k) * bs2 + i] = 0.0;
}

// GMRES(30) to 1e-10 on Ac (CPU) with Mc and on Ag (CUDA) with Mg, both set up, from x = 0 with
// the same right-hand side: both converge and their iteration counts differ by at most 2.
inline void expect_gmres_agrees(const BsrMatrix& Ac, const Preconditioner& Mc, const BsrMatrix& Ag,
                                const Preconditioner& Mg, const std::vector<double>& hb, int max_iterations,
                                const std::string& what)
{
  const ExecPtr& cpu = Ac.exec_ptr();
  const ExecPtr& gpu = Ag.exec_ptr();
  Vector bc(cpu, std::span<const double>(hb)), bg(gpu, std::span<const double>(hb));
  Vector xc(cpu, Ac.scalar_rows()), xg(gpu, Ag.scalar_rows());
  fill(xc, 0.0), fill(xg, 0.0);
  const KrylovConfig cfg{KrylovMethod::gmres, 1e-10, 0.0, max_iterations, 30};
  KrylovSolver sc(cpu, cfg), sg(gpu, cfg);
  const auto a = sc.solve(Ac, Mc, bc, xc);
  const auto g = sg.solve(Ag, Mg, bg, xg);
  std::printf("GMRES(30) + %s: CPU %d, CUDA %d iterations\n", what.c_str(), a.iterations, g.iterations);
  EXPECT_TRUE(a.converged) << what;
  EXPECT_TRUE(g.converged) << what << ": " << to_string(g.reason);
  EXPECT_LE(std::abs(a.iterations - g.iterations), 2) << what;
}

}  // namespace blockres::test
