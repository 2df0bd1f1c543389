// Shared pieces of the `blockres bench` reports (see bench_common.hpp).
#include "miniapp/bench/bench_common.hpp"

#include "kernels/blas1/blas1.hpp"
#include "linalg/array.hpp"
#include "linalg/vector_ops.hpp"
#include "miniapp/io/h5.hpp"
#include "miniapp/io/results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace blockres::benchutil {

void require_cuda_device(std::string_view section)
{
  if (std::string why; Executor::cuda_device_count(&why) == 0)
    throw std::runtime_error(missing_gpu_message(section, std::string(section) + " needs a CUDA device (" + why + ")",
                                                 MissingGpu::no_device));
}

double copy_bandwidth_gbs(const ExecPtr& e, size64_t bytes, int warmup, int reps, Timing& t)
{
  Array<double> a(e, bytes / 8), b(e, bytes / 8);
  fill(a, 1.0);
  auto s = e->stream();
  t = time_on_stream(s, warmup, reps, [&] {
    BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, s));
  });
  return 2.0 * double(bytes) / (t.median_ms * 1e-3) / 1e9;
}

double read_bandwidth_gbs(const ExecPtr& e, size64_t bytes, int warmup, int reps, Timing& t)
{
  const size64_t n = bytes / 8;
  Array<double> a(e, n), work(e, kernels::cuda::stream_sum_workspace(n)), out(e, 1);
  fill(a, 1.0);
  auto s = e->stream();
  t = time_checked(
      s, warmup, reps, [&] { kernels::cuda::stream_sum(s, n, a.data(), out.data(), work.data()); },
      [&] { fill(out, nan_v); });
  if (out.to_host()[0] != double(n))  // exact: a sum of ones below 2^53
    throw std::runtime_error(fmt::format("read-only stream: sum of {} ones is {}", n, out.to_host()[0]));
  return double(n) * 8.0 / (t.median_ms * 1e-3) / 1e9;
}

Ceilings measure_ceilings(const ExecPtr& e, int warmup, int reps)
{
  Ceilings c;
  c.reps = ceiling_reps(reps);
  const int w = ceiling_warmup(warmup);
  c.copy_gbs = copy_bandwidth_gbs(e, size64_t(2) << 30, w, c.reps, c.copy_t);
  c.read_gbs = read_bandwidth_gbs(e, size64_t(2) << 30, w, c.reps, c.read_t);
  return c;
}

std::string ceilings_text(const Ceilings& c)
{
  return fmt::format("device-to-device copy: {:.0f} GB/s (2 GiB, read + write, median of {}); read-only stream: "
                     "{:.0f} GB/s (2 GiB summed, median of {})",
                     c.copy_gbs, c.reps, c.read_gbs, c.reps);
}

void write_ceilings(Json& j, const Ceilings& c)
{
  j["copy_bandwidth"] = {{"gb_per_s", c.copy_gbs}, {"median_ms", c.copy_t.median_ms}};
  j["read_bandwidth"] = {{"gb_per_s", c.read_gbs},
                         {"median_ms", c.read_t.median_ms},
                         {"kernel", "kernels::cuda::stream_sum over 2 GiB (one 32 KB tile per block, 16-byte loads, sum checked)"}};
}

namespace {
size64_t l2_bytes()
{
  int dev = 0, l2 = 0;
  BLOCKRES_CUDA_CHECK(cudaGetDevice(&dev));
  BLOCKRES_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  return size64_t(l2);
}
}  // namespace

size64_t L2Scrub::default_bytes() { return std::max<size64_t>(4 * l2_bytes(), size64_t(64) << 20); }

L2Scrub::L2Scrub(const ExecPtr& e)
    : buf_(e, default_bytes() / sizeof(double)),
      work_(e, kernels::cuda::stream_sum_workspace(default_bytes() / sizeof(double))),
      sum_(e, 1)
{
  fill(buf_, 0.0);
  operator()();  // the fill's dirty lines written back here, not in a timed call
}

void L2Scrub::operator()() const
{
  kernels::cuda::stream_sum(buf_.exec().stream(), buf_.size(), buf_.data(), const_cast<double*>(sum_.data()),
                            const_cast<double*>(work_.data()));
}

bool fits_in_l2(double bytes)
{
  static const double l2 = double(l2_bytes());
  return bytes <= l2;
}

BsrPattern stencil_pattern(int n, int points)
{
  BsrPattern p;
  p.nrows = p.ncols = n * n * n;
  p.row_ptr.reserve(std::size_t(p.nrows) + 1);
  p.row_ptr.push_back(0);
  p.col_ind.reserve(std::size_t(p.nrows) * points);
  const int reach = points == 27 ? 1 : 0;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        for (int dk = -1; dk <= 1; ++dk)
          for (int dj = -1; dj <= 1; ++dj)
            for (int di = -1; di <= 1; ++di) {
              const int dist = std::abs(di) + std::abs(dj) + std::abs(dk);
              if (reach == 0 && dist > 1) continue;
              const int a = i + di, b = j + dj, c = k + dk;
              if (a < 0 || b < 0 || c < 0 || a >= n || b >= n || c >= n) continue;
              p.col_ind.push_back(a + n * (b + n * c));
            }
        p.row_ptr.push_back(static_cast<index_t>(p.col_ind.size()));
      }
  return p;
}

namespace {
constexpr std::uint64_t value_seed = 2026;      // the nonsymmetric values
constexpr std::uint64_t symmetric_seed = 2027;  // the symmetric variant's
constexpr double convection = 0.5;              // x-direction coupling -(1 +- convection): nonsymmetric
}  // namespace

// Block values of the 7-point stencil matrices of bench isai and bench solver (their matrix_text):
// symmetric = false gives the nonsymmetric convection-diffusion-like matrix; true the symmetric variant,
// whose random parts are drawn per unordered pair of cells {r, c} (entry (a, b) of block (r, c) is entry
// (b, a) of block (c, r)) and, in the diagonal block, per unordered pair of entries, so no block has to
// look up its transpose.
std::vector<double> stencil_values(const BsrPattern& p, int bs, bool symmetric)
{
  const size64_t bb = size64_t(bs) * bs;
  std::vector<double> v(static_cast<std::size_t>(p.nnzb() * bb));
  const double d = 6.0 * (1.0 + 0.05 * bs) + 0.1 * bs + 0.05;
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < p.nrows; ++r)
    for (index_t q = p.row_ptr[r]; q < p.row_ptr[r + 1]; ++q) {
      const index_t c = p.col_ind[q];
      double* blk = v.data() + size64_t(q) * bb;
      const std::uint64_t pair =
          mix(symmetric_seed ^ (std::uint64_t(std::min(r, c)) << 32 | std::uint64_t(std::max(r, c))));
      for (size64_t e = 0; e < bb; ++e) {
        const int a = static_cast<int>(e / bs), b = static_cast<int>(e % bs);
        double u;
        if (symmetric) {
          const bool transposed = c == r ? a > b : r > c;
          u = unit(pair, static_cast<std::uint64_t>(transposed ? size64_t(b) * bs + a : e));
        } else {
          u = unit(value_seed, static_cast<std::uint64_t>(size64_t(q) * bb + e));
        }
        if (c == r) {
          blk[e] = a == b ? d : 0.1 * u;
        } else {
          const double coef = symmetric          ? -1.0
                              : c == r - 1       ? -(1 + convection)
                              : c == r + 1       ? -(1 - convection)
                                                 : -1.0;
          blk[e] = (a == b ? coef : 0.0) + 0.05 * std::abs(coef) * u;
        }
      }
    }
  return v;
}


int stencil_side(int bs, int points, double gb)
{
  const double per_row = points * (8.0 * bs * bs + 4.0);
  return std::max(4, static_cast<int>(std::cbrt(gb * 1e9 / per_row)));
}

double relative_residual(const BsrMatrix& A, const Array<double>& b, const Array<double>& x, Array<double>& r,
                         double b_norm)
{
  copy(b, r);
  spmv(A, -1.0, x, 1.0, r);
  const double rn = norm2(r);
  return b_norm > 0 ? rn / b_norm : rn;
}

std::string ms(double v) { return std::isfinite(v) ? fmt::format("{:9.4f}", v) : fmt::format("{:>9}", "--"); }

std::uint64_t mix(std::uint64_t z)
{
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double unit(std::uint64_t seed, std::uint64_t i) { return double(mix(seed * 0x100000001b3ULL + i) >> 11) * 0x1.0p-52 - 1.0; }

std::vector<double> random_values(size64_t n, std::uint64_t seed)
{
  std::vector<double> v(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (size64_t i = 0; i < n; ++i) v[i] = unit(seed, i);
  return v;
}

TestMatrix read_jacobian(const std::string& path)
{
  const auto f = h5::File::open_read(path);
  // Without the attribute: a file of version 1's layout written before it existed.
  if (H5Aexists(f.id(), "layout_version") > 0)
    if (const std::int64_t v = h5::read_int_attribute(f.id(), "layout_version"); v != jacobian_layout_version)
      throw std::runtime_error(fmt::format("{}: Jacobian file layout version {}, which this blockres does not know (it "
                                           "reads version {}{})",
                                           path, v, jacobian_layout_version,
                                           v > jacobian_layout_version ? "; written by a newer blockres?" : ""));
  h5::Id g = h5::open_group(f.id(), "jacobian");
  TestMatrix m;
  m.name = std::filesystem::path(path).stem().string();
  m.bs = static_cast<int>(h5::read_int_attribute(g, "block_size"));
  m.pattern.nrows = static_cast<index_t>(h5::read_int_attribute(g, "block_rows"));
  m.pattern.ncols = m.pattern.nrows;
  for (auto v : h5::read_ints(g, "row_ptr")) m.pattern.row_ptr.push_back(static_cast<index_t>(v));
  for (auto v : h5::read_ints(g, "col_ind")) m.pattern.col_ind.push_back(static_cast<index_t>(v));
  m.values = h5::read_doubles(g, "values").values;
  m.pattern.validate();
  if (m.values.size() != std::size_t(m.pattern.nnzb()) * m.bs * m.bs)
    throw std::runtime_error(fmt::format("{}: /jacobian/values has the wrong size", path));
  return m;
}

}  // namespace blockres::benchutil
