// Symbolic set-ups are cached by the identity of the matrix's pattern, never by the address of its
// row pointer: a matrix freed and another one built in its place (same address, same sizes, same
// row_ptr, columns differing in one row) must get a symbolic set-up of its own. Every preconditioner
// that keeps one (block-Jacobi natural and agglomerated, scalar and block ILU(0) with exact and ISAI
// solves, ISAI, CPR) is compared, on the second matrix, with a fresh one set up on it alone.
#include "linalg/preconditioners/cpr/cpr_options.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "linalg/preconditioners/isai/isai_options.hpp"
#include "linalg/preconditioners/registry.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

using namespace blockres;

namespace {

// Tridiagonal block pattern of n rows; `shifted` moves row `row`'s columns from {row-1, row, row+1}
// to {row, row+1, row+2}: row_ptr and the block count stay the same, the diagonal's position in
// that row and the coupling change.
BsrPattern banded(index_t n, bool shifted, index_t row)
{
  BsrPattern p;
  p.nrows = p.ncols = n;
  p.row_ptr.push_back(0);
  for (index_t r = 0; r < n; ++r) {
    if (shifted && r == row) {
      for (index_t c = r; c <= r + 2; ++c) p.col_ind.push_back(c);
    } else {
      for (index_t c = std::max<index_t>(0, r - 1); c <= std::min<index_t>(n - 1, r + 1); ++c) p.col_ind.push_back(c);
    }
    p.row_ptr.push_back(static_cast<index_t>(p.col_ind.size()));
  }
  return p;
}

std::vector<double> apply_once(const Preconditioner& M, const ExecPtr& e, const std::vector<double>& r)
{
  Vector rv(e, std::span<const double>(r)), z(e, rv.size());
  fill(z, 0.0);
  M.apply(rv, z);
  return z.to_host();
}

}  // namespace

TEST(PatternIdentity, TwoPatternsAtOneAddressDoNotShareASymbolicSetup)
{
  // A freed matrix's arrays must be where the next one's go. glibc's aligned_alloc rarely hands a
  // freed block back (it carves aligned blocks out of larger ones), so every array of this size is
  // made its own mapping (a fixed threshold, not glibc's moving one): the kernel places a mapping
  // at the top of the highest free gap that fits, which is where the freed matrix was.
  ASSERT_EQ(mallopt(M_MMAP_THRESHOLD, 64 * 1024), 1);
  // Nothing else may map memory between the free and the next allocation: a worker thread that finds
  // its malloc arena busy maps a new 64 MB one (timing-dependent: it failed under `ctest -j2` about 1
  // run in 5), so one arena for every thread; and the OpenMP team (its thread stacks) exists first.
  ASSERT_EQ(mallopt(M_ARENA_MAX, 1), 1);
  {
    int threads = 0;
#pragma omp parallel reduction(+ : threads)
    threads += 1;
    ASSERT_GE(threads, 1);
  }
  const ExecPtr e = Executor::create_cpu();
  const int bs = 2;
  const index_t n = 50000, row = 7;
  const BsrPattern p1 = banded(n, false, row), p2 = banded(n, true, row);
  ASSERT_EQ(p1.row_ptr, p2.row_ptr);
  ASSERT_NE(p1.col_ind, p2.col_ind);
  const std::vector<double> v1 = test::random_values(p1, bs, 8.0), v2 = test::random_values(p2, bs, 8.0);
  const std::vector<double> r = test::random_vector(size64_t(n) * bs);

  struct Case {
    std::string what;
    PreconditionerSpec spec;
  };
  std::vector<Case> cases;
  cases.push_back({"block-Jacobi (natural blocks)", {"block_jacobi", BlockJacobiOptions{}}});
  cases.push_back({"block-Jacobi (agglomerated)", {"block_jacobi", BlockJacobiOptions{.max_block_size = 2 * bs}}});
  cases.push_back({"ILU(0) scalar view", {"ilu0", Ilu0Options{}}});
  cases.push_back({"ILU(0) scalar view, ISAI", {"ilu0", Ilu0Options{.trisolve = TriangularSolve::isai}}});
  cases.push_back({"ILU(0) block view", {"ilu0", Ilu0Options{.factor_view = IluFactorView::block}}});
  cases.push_back({"ISAI", {"isai", IsaiOptions{}}});
  // ILU(0) stages: their set-up keys on the matrix structure (AMG compares structure by content).
  cases.push_back({"CPR", {"cpr", CprOptions{.pressure = {"ilu0", Ilu0Options{}},
                                             .second = {"ilu0", Ilu0Options{.factor_view = IluFactorView::block}}}}});

  for (const auto& c : cases) {
    auto M = make_preconditioner(e, c.spec);
    std::optional<BsrMatrix> A;
    A.emplace(e, bs, p1);
    A->values().copy_from_host(v1);
    ASSERT_TRUE(M->setup(*A).ok) << c.what;
    const index_t* first_address = A->row_ptr().data();
    A.reset();
    A.emplace(e, bs, p2);  // the first matrix's row_ptr block is the allocator's first choice
    A->values().copy_from_host(v2);
    ASSERT_EQ(A->row_ptr().data(), first_address)
        << c.what << ": the allocator did not reuse the address, so this run shows nothing";
    ASSERT_TRUE(M->setup(*A).ok) << c.what;
    const auto z = apply_once(*M, e, r);

    auto fresh = make_preconditioner(e, c.spec);
    ASSERT_TRUE(fresh->setup(*A).ok) << c.what;
    const auto z_ref = apply_once(*fresh, e, r);
    ASSERT_EQ(z.size(), z_ref.size());
    double worst = 0.0;  // bit for bit: the same set-up on the same values
    for (std::size_t i = 0; i < z.size(); ++i) worst = std::max(worst, std::abs(z[i] - z_ref[i]));
    EXPECT_EQ(worst, 0.0) << c.what << ": the set-up of the second pattern is not its own (largest difference "
                          << worst << ")";
  }
}
