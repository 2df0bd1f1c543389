// Grid construction (active cells, depths, pore volumes, transmissibilities) and the
// reproducible log-normal property generator.
#include "physics/grid.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

namespace blockres::physics {

double tpfa_transmissibility(double l1, double k1, double l2, double k2, double area)
{
  if (k1 <= 0.0 || k2 <= 0.0) return 0.0;
  return 1.0 / (l1 / (2.0 * k1 * area) + l2 / (2.0 * k2 * area));
}

Grid::Grid(const GridSpec& g, const RockSpec& rock) : spec_(g)
{
  if (g.nx < 1 || g.ny < 1 || g.nz < 1) throw std::invalid_argument("grid dimensions must be >= 1");
  const long long n = 1LL * g.nx * g.ny * g.nz;
  if (n > std::numeric_limits<index_t>::max() / 8) throw std::invalid_argument("grid too large");
  if (g.dx.size() != std::size_t(g.nx) || g.dy.size() != std::size_t(g.ny) || g.dz.size() != std::size_t(g.nz))
    throw std::invalid_argument("grid: dx/dy/dz must have nx/ny/nz values");
  for (const auto* v : {&rock.porosity, &rock.kx, &rock.ky, &rock.kz})
    if (v->size() != std::size_t(n)) throw std::invalid_argument("rock: property size does not match the grid");

  layer_depth_.resize(g.nz);
  double top = g.top;
  for (int k = 0; k < g.nz; ++k) {
    layer_depth_[k] = top + 0.5 * g.dz[k];
    top += g.dz[k];
  }

  active_.assign(std::size_t(n), -1);
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const index_t c = global_index(i, j, k);
        if (rock.porosity[c] > 0.0) {
          active_[c] = static_cast<index_t>(global_.size());
          global_.push_back(c);
          depth_.push_back(layer_depth_[k]);
          pv_ref_.push_back(rock.porosity[c] * g.dx[i] * g.dy[j] * g.dz[k]);
        }
      }

  auto add = [&](index_t c1, index_t c2, double l1, double k1, double l2, double k2, double area) {
    const index_t a = active_[c1], b = active_[c2];
    if (a < 0 || b < 0) return;
    const double t = tpfa_transmissibility(l1, k1, l2, k2, area);
    if (t > 0.0) faces_.push_back({std::min(a, b), std::max(a, b), t});
  };
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const index_t c = global_index(i, j, k);
        if (i + 1 < g.nx) {
          const index_t e = global_index(i + 1, j, k);
          add(c, e, g.dx[i], rock.kx[c], g.dx[i + 1], rock.kx[e], g.dy[j] * g.dz[k]);
        }
        if (j + 1 < g.ny) {
          const index_t e = global_index(i, j + 1, k);
          add(c, e, g.dy[j], rock.ky[c], g.dy[j + 1], rock.ky[e], g.dx[i] * g.dz[k]);
        }
        if (k + 1 < g.nz) {
          const index_t e = global_index(i, j, k + 1);
          add(c, e, g.dz[k], rock.kz[c], g.dz[k + 1], rock.kz[e], g.dx[i] * g.dy[j]);
        }
      }
}

namespace {

// splitmix64: a tiny, fully specified generator, so a seed gives the same field everywhere. Its k-th
// output (k = 0, 1, ...) is mix(seed + (k + 1) * gamma), so any draw can be made without the ones
// before it: the fill below runs in parallel and gives the sequential generator's values.
constexpr std::uint64_t splitmix_gamma = 0x9e3779b97f4a7c15ULL;
std::uint64_t splitmix_mix(std::uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
// The k-th draw as a double in (0, 1).
double splitmix_uniform_open(std::uint64_t seed, std::uint64_t k)
{
  return (double(splitmix_mix(seed + (k + 1) * splitmix_gamma) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// In-place moving average of half-width h along one axis (zero-padded, normalised by the
// number of cells that fall inside the grid).
void smooth_axis(std::vector<double>& f, int nx, int ny, int nz, int axis, int h)
{
  if (h <= 0) return;
  const int n_axis = axis == 0 ? nx : axis == 1 ? ny : nz;
  const long long stride = axis == 0 ? 1 : axis == 1 ? nx : 1LL * nx * ny;
  const int n_other1 = axis == 0 ? ny : nx, n_other2 = axis == 2 ? ny : nz;
  // Lines are independent: any thread count gives the same values.
#pragma omp parallel
  {
    std::vector<double> line(static_cast<std::size_t>(n_axis)), out(static_cast<std::size_t>(n_axis));
#pragma omp for collapse(2) schedule(static)
    for (int b = 0; b < n_other2; ++b)
      for (int a = 0; a < n_other1; ++a) {
        long long base;
        if (axis == 0) base = 1LL * nx * (a + 1LL * ny * b);
        else if (axis == 1) base = a + 1LL * nx * ny * b;
        else base = a + 1LL * nx * b;
        for (int t = 0; t < n_axis; ++t) line[t] = f[base + t * stride];
        for (int t = 0; t < n_axis; ++t) {
          double s = 0.0;
          int cnt = 0;
          for (int u = std::max(0, t - h); u <= std::min(n_axis - 1, t + h); ++u) s += line[u], ++cnt;
          out[t] = s / cnt;
        }
        for (int t = 0; t < n_axis; ++t) f[base + t * stride] = out[t];
      }
  }
}

}  // namespace

std::vector<double> standard_normal_field(int nx, int ny, int nz, double correlation_length, unsigned long long seed)
{
  const std::size_t n = std::size_t(nx) * ny * nz;
  std::vector<double> g(n);
  // Box-Muller pairs: pair p takes draws 2p and 2p + 1 (an odd n leaves the last pair's sine unused).
  const auto pairs = static_cast<std::int64_t>((n + 1) / 2);
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < pairs; ++p) {
    const std::size_t c = 2 * std::size_t(p);
    const double u1 = splitmix_uniform_open(seed, 2 * std::uint64_t(p)),
                 u2 = splitmix_uniform_open(seed, 2 * std::uint64_t(p) + 1);
    const double r = std::sqrt(-2.0 * std::log(u1));
    g[c] = r * std::cos(2.0 * std::numbers::pi * u2);
    if (c + 1 < n) g[c + 1] = r * std::sin(2.0 * std::numbers::pi * u2);
  }
  // Correlate by repeated box filters (three passes approximate a Gaussian kernel) whose
  // combined width matches the requested correlation length; then restore unit variance.
  const int h = static_cast<int>(std::lround(correlation_length / 2.0));
  for (int pass = 0; pass < 3; ++pass)
    for (int axis = 0; axis < 3; ++axis) smooth_axis(g, nx, ny, nz, axis, h);
  // The sums in index order (the field's values must not depend on the thread count).
  double mean = 0.0;
  for (double v : g) mean += v;
  mean /= double(n);
  double var = 0.0;
  for (double v : g) var += (v - mean) * (v - mean);
  const double sd = n > 1 ? std::sqrt(var / double(n - 1)) : 0.0;
  const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < count; ++c) g[c] = sd > 0.0 ? (g[c] - mean) / sd : 0.0;
  return g;
}

std::vector<double> lognormal_field(const std::vector<double>& z, double mean_log, double std_log)
{
  std::vector<double> out(z.size());
  const auto count = static_cast<std::int64_t>(z.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < count; ++c) out[c] = std::exp(mean_log + std_log * z[c]);
  return out;
}

std::vector<double> lognormal_field(int nx, int ny, int nz, double mean_log, double std_log,
                                    double correlation_length, unsigned long long seed)
{
  return lognormal_field(standard_normal_field(nx, ny, nz, correlation_length, seed), mean_log, std_log);
}

Grid::CellFaces Grid::cell_faces() const
{
  const index_t n = num_active();
  CellFaces c;
  c.ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (const Face& f : faces_) ++c.ptr[f.a + 1], ++c.ptr[f.b + 1];
  for (index_t i = 0; i < n; ++i) c.ptr[i + 1] += c.ptr[i];
  c.face.resize(static_cast<std::size_t>(c.ptr[n]));
  std::vector<index_t> next(c.ptr.begin(), c.ptr.end() - 1);
  for (std::size_t f = 0; f < faces_.size(); ++f) {
    c.face[next[faces_[f].a]++] = static_cast<index_t>(f);
    c.face[next[faces_[f].b]++] = static_cast<index_t>(f);
  }
  return c;
}

}  // namespace blockres::physics
