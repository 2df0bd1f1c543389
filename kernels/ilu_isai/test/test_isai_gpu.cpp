// CUDA ISAI generation and triangle SpMV against the CPU references: n = 1, 7, 1001, 30000,
// k = 1, 2, 3, both triangles, on random factors, random factors with hub columns (columns of
// <= 32 and > 32 pattern entries in the same matrix, i.e. both kernels in one generation),
// bands of width 40 and wide stencils; NaN-poisoned outputs (every entry must be written), a
// regeneration with new factor values into the same arrays, argument checks. Label `gpu`.
#include "kernels/ilu_isai/isai.hpp"
#include "kernels/ilu_isai/test/device_test_util.hpp"
#include "kernels/ilu_isai/test/isai_test_util.hpp"
#include "linalg/array.hpp"
#include "linalg/executor.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

using namespace blockres;
using namespace blockres::test_device;
using namespace blockres::test_isai;
using kernels::isai_pattern;
namespace kc = blockres::kernels::cpu;
namespace kg = blockres::kernels::cuda;

namespace {

// A pattern's device arrays and the view that points at them.
struct DevicePattern {
  Array<index_t> col_ptr, row_ind, csr_pos, short_cols, long_cols;
  kg::IsaiDevicePattern view;
  DevicePattern(const ExecPtr& gpu, const IsaiPattern& p)
      : col_ptr(upload(gpu, p.col_ptr)), row_ind(upload(gpu, p.row_ind)), csr_pos(upload(gpu, p.csr_pos)),
        short_cols(upload(gpu, p.short_cols)), long_cols(upload(gpu, p.long_cols))
  {
    view = {&p, col_ptr.data(), row_ind.data(), csr_pos.data(), short_cols.data(), long_cols.data()};
  }
};

IsaiPattern pattern_of(const Csr& A, Triangle tri, int k)
{
  return isai_pattern(tri, A.n, A.row_ptr.data(), A.col.data(), k);
}

std::vector<double> cpu_generate(const Csr& A, const IsaiPattern& p)
{
  std::vector<double> m(static_cast<std::size_t>(p.nnz()), nan_v);
  kc::isai_generate(p, A.view(), m.data());
  return m;
}

// The matrices of the comparison: (label, LU, whether both short and long columns must occur at
// every k). Hubs every 97 columns reach 45 rows on each side (L and U columns of 46 entries).
std::vector<std::tuple<std::string, Csr, bool>> gpu_matrices()
{
  std::vector<std::tuple<std::string, Csr, bool>> out;
  for (index_t n : {1, 7, 1001, 30000}) {
    const std::string sz = " n=" + std::to_string(n);
    out.emplace_back("random" + sz, random_lu(n, 2, 6), false);
    out.emplace_back("random+hubs" + sz, random_lu(n, 2, 6, n >= 1000 ? 97 : 4, 45), n >= 1000);
  }
  out.emplace_back("band 40 n=1001", band_lu(1001, 40), true);
  out.emplace_back("band 40 n=7", band_lu(7, 40), false);
  // More long columns than the long kernel's thread blocks: the blocks reuse their scratch slices.
  out.emplace_back("band 40 n=3001", band_lu(3001, 40), true);
  out.emplace_back("wide stencil n=1001", random_lu(1001, 4, 20), false);
  return out;
}

}  // namespace

TEST(IsaiGpu, GenerateMatchesCpu)
{
  auto gpu = Executor::create_cuda(0);
  for (const auto& [label, A, mixed] : gpu_matrices()) {
    const DeviceCsr dA(gpu, A);
    for (Triangle tri : both_triangles)
      for (int k = 1; k <= 3; ++k) {
        const std::string what = label + " " + to_string(tri) + " k=" + std::to_string(k);
        const IsaiPattern p = pattern_of(A, tri, k);
        if (mixed) {
          ASSERT_FALSE(p.short_cols.empty()) << what;
          ASSERT_FALSE(p.long_cols.empty()) << what;
        }
        if (label == "band 40 n=3001") {
          ASSERT_GT(p.long_cols.size(), std::size_t(kernels::isai_long_blocks)) << what;
        }
        const auto ref = cpu_generate(A, p);

        const DevicePattern dp(gpu, p);
        Array<double> scratch(gpu, p.scratch_doubles());
        Array<double> m = upload(gpu, std::vector<double>(ref.size(), nan_v));  // poisoned
        kg::isai_generate(gpu->stream(), dp.view, dA.cview(), m.data(), scratch.data());
        gpu->synchronize();
        const auto g = m.to_host();

        ASSERT_EQ(count_non_finite(g), 0u) << what << ": entries left unwritten (or not finite)";
        EXPECT_LE(max_column_rel_diff(p, g, ref), 1e-12) << what << " (" << p.short_cols.size() << " short, "
                                                          << p.long_cols.size() << " long columns)";
        EXPECT_LE(max_pattern_residual(A, tri, p, g), 1e-12) << what;
      }
  }
}

TEST(IsaiGpu, RegenerationWithNewFactorValues)
{
  // The setup reuses pattern, scratch and M across refactorisations: regenerate into the same
  // arrays (holding the previous M, not poisoned) after the factor values changed.
  auto gpu = Executor::create_cuda(0);
  const Csr A = random_lu(3001, 2, 6, 150, 40);
  DeviceCsr dA(gpu, A);
  for (Triangle tri : both_triangles) {
    const IsaiPattern p = pattern_of(A, tri, 2);
    ASSERT_FALSE(p.long_cols.empty());
    const DevicePattern dp(gpu, p);
    Array<double> scratch(gpu, p.scratch_doubles());
    Array<double> m = upload(gpu, std::vector<double>(static_cast<std::size_t>(p.nnz()), nan_v));
    kg::isai_generate(gpu->stream(), dp.view, dA.cview(), m.data(), scratch.data());
    const Csr A2 = with_new_values(A);
    dA.val.copy_from_host(std::span<const double>(A2.val));
    kg::isai_generate(gpu->stream(), dp.view, dA.cview(), m.data(), scratch.data());
    gpu->synchronize();
    const auto g = m.to_host();
    EXPECT_LE(max_column_rel_diff(p, g, cpu_generate(A2, p)), 1e-12) << to_string(tri);
    EXPECT_LE(max_pattern_residual(A2, tri, p, g), 1e-12) << to_string(tri);
    dA.val.copy_from_host(std::span<const double>(A.val));
  }
}

TEST(IsaiGpu, TriangleSpmvMatchesCpu)
{
  auto gpu = Executor::create_cuda(0);
  for (const auto& [label, A, mixed] : gpu_matrices()) {
    (void)mixed;
    const DeviceCsr dA(gpu, A);
    const auto x = random_vector(A.n);
    const Array<double> dx = upload(gpu, x);
    for (Triangle tri : both_triangles) {
      const std::string what = label + " " + to_string(tri);
      std::vector<double> ref(static_cast<std::size_t>(A.n));
      kc::triangle_spmv(tri, A.view(), x.data(), ref.data());
      Array<double> y = upload(gpu, std::vector<double>(ref.size(), nan_v));
      kg::triangle_spmv(gpu->stream(), tri, dA.cview(), dx.data(), y.data());
      gpu->synchronize();
      const auto g = y.to_host();
      const auto scale = abs_triangle_times(A, tri, x);  // rounding-error scale |T| |x|
      for (std::size_t i = 0; i < ref.size(); ++i)
        ASSERT_LE(std::abs(g[i] - ref[i]), 1e-12 * scale[i])
            << what << " row " << i << ": " << g[i] << " vs " << ref[i];
    }
  }
}

TEST(IsaiGpu, ArgumentChecksAndEmptyMatrix)
{
  auto gpu = Executor::create_cuda(0);
  const Csr A = band_lu(100, 40);
  const DeviceCsr dA(gpu, A);
  const IsaiPattern p = pattern_of(A, Triangle::unit_lower, 1);
  ASSERT_GT(p.scratch_doubles(), 0);
  const DevicePattern dp(gpu, p);
  Array<double> m(gpu, p.nnz());
  kg::IsaiDevicePattern no_host = dp.view;
  no_host.host = nullptr;
  EXPECT_THROW(kg::isai_generate(gpu->stream(), no_host, dA.cview(), m.data(), nullptr), std::invalid_argument);
  EXPECT_THROW(kg::isai_generate(gpu->stream(), dp.view, dA.cview(), m.data(), nullptr), std::invalid_argument)
      << "long columns need scratch";
  auto wrong_n = dA.cview();
  wrong_n.n = 99;
  Array<double> scratch(gpu, p.scratch_doubles());
  EXPECT_THROW(kg::isai_generate(gpu->stream(), dp.view, wrong_n, m.data(), scratch.data()), std::invalid_argument);

  // n = 0: nothing to launch.
  const std::vector<index_t> rp0{0};
  const IsaiPattern p0 = isai_pattern(Triangle::upper, 0, rp0.data(), nullptr, 3);
  const Array<index_t> drp0 = upload(gpu, rp0);
  const DevicePattern dp0(gpu, p0);
  const kernels::CsrView<const double> empty{0, drp0.data(), nullptr, nullptr};
  EXPECT_NO_THROW(kg::isai_generate(gpu->stream(), dp0.view, empty, nullptr, nullptr));
  EXPECT_NO_THROW(kg::triangle_spmv(gpu->stream(), Triangle::upper, empty, nullptr, nullptr));
  gpu->synchronize();
}
