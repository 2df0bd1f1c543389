// Grid construction (active cells, depths, pore volumes, transmissibilities) and the
// reproducible log-normal property generator.
#include "physics/grid.hpp"
#include "kernels/parallel_cpu.hpp"

#include <algorithm>
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

  // Active cells numbered in global order, and the faces of each active cell a toward its x+, y+ and
  // z+ neighbours (in that order) listed by a: faces() is sorted by a. Both built row by row (the nx
  // cells of one (j, k)) in two passes, counts then fill, so any thread count gives the order and the
  // values of the sequential loop.
  const long long rows = 1LL * g.ny * g.nz;
  active_.assign(std::size_t(n), -1);
  std::vector<index_t> row_active(std::size_t(rows) + 1, 0);
  const bool par = kernels::cpu::parallel_worth(size64_t(n));
#pragma omp parallel for schedule(static) if (par)
  for (long long r = 0; r < rows; ++r) {
    const index_t c0 = index_t(r) * g.nx;
    index_t cnt = 0;
    for (int i = 0; i < g.nx; ++i) cnt += rock.porosity[c0 + i] > 0.0;
    row_active[r + 1] = cnt;
  }
  for (long long r = 0; r < rows; ++r) row_active[r + 1] += row_active[r];
  const index_t na = row_active[rows];
  global_.resize(std::size_t(na)), depth_.resize(std::size_t(na)), pv_ref_.resize(std::size_t(na));
#pragma omp parallel for schedule(static) if (par)
  for (long long r = 0; r < rows; ++r) {
    const int j = int(r % g.ny), k = int(r / g.ny);
    index_t a = row_active[r];
    for (int i = 0; i < g.nx; ++i) {
      const index_t c = global_index(i, j, k);
      if (!(rock.porosity[c] > 0.0)) continue;
      active_[c] = a, global_[a] = c, depth_[a] = layer_depth_[k];
      pv_ref_[a] = rock.porosity[c] * g.dx[i] * g.dy[j] * g.dz[k];
      ++a;
    }
  }
  // Cell c's faces toward x+, y+, z+ (those between two active cells with a positive
  // transmissibility), written at out when out is not null; returns how many.
  const auto cell_faces_up = [&](int i, int j, int k, Face* out) {
    const index_t c = global_index(i, j, k), a = active_[c];
    if (a < 0) return 0;
    int m = 0;
    const auto add = [&](index_t e, double l1, double k1, double l2, double k2, double area) {
      const index_t b = active_[e];
      if (b < 0) return;
      const double t = tpfa_transmissibility(l1, k1, l2, k2, area);
      if (t > 0.0) {
        if (out) out[m] = Face{std::min(a, b), std::max(a, b), t};
        ++m;
      }
    };
    if (i + 1 < g.nx) add(c + 1, g.dx[i], rock.kx[c], g.dx[i + 1], rock.kx[c + 1], g.dy[j] * g.dz[k]);
    if (j + 1 < g.ny) {
      const index_t e = global_index(i, j + 1, k);
      add(e, g.dy[j], rock.ky[c], g.dy[j + 1], rock.ky[e], g.dx[i] * g.dz[k]);
    }
    if (k + 1 < g.nz) {
      const index_t e = global_index(i, j, k + 1);
      add(e, g.dz[k], rock.kz[c], g.dz[k + 1], rock.kz[e], g.dx[i] * g.dy[j]);
    }
    return m;
  };
  // Each active cell's face count, then their running sum: cell a's faces start at face_start_[a]
  // (a row's first active cell, row_active[r], is where the row's faces start).
  face_start_.assign(std::size_t(na) + 1, 0);
#pragma omp parallel for schedule(static) if (par)
  for (long long r = 0; r < rows; ++r) {
    const int j = int(r % g.ny), k = int(r / g.ny);
    for (int i = 0; i < g.nx; ++i) {
      const index_t a = active_[global_index(i, j, k)];
      if (a >= 0) face_start_[a + 1] = cell_faces_up(i, j, k, nullptr);
    }
  }
  for (index_t a = 0; a < na; ++a) face_start_[a + 1] += face_start_[a];
  faces_.resize(std::size_t(face_start_[na]));
#pragma omp parallel for schedule(static) if (par)
  for (long long r = 0; r < rows; ++r) {
    const int j = int(r % g.ny), k = int(r / g.ny);
    Face* out = faces_.data() + face_start_[row_active[r]];
    for (int i = 0; i < g.nx; ++i) out += cell_faces_up(i, j, k, out);
  }
}

const dist::SerialCommunicator Grid::serial_{};

Grid::Grid(const Grid& whole, std::span<const index_t> cells, index_t owned, dist::CommPtr comm)
    : spec_(whole.spec_), layer_depth_(whole.layer_depth_), comm_(std::move(comm))
{
  const auto n = static_cast<index_t>(cells.size());
  if (owned < 0 || owned > n) throw std::invalid_argument("grid part: owned cells out of range");
  owned_ = owned, whole_active_ = whole.num_active();
  active_.assign(whole.active_.size(), -1);
  global_.resize(cells.size()), depth_.resize(cells.size()), pv_ref_.resize(cells.size());
  std::vector<index_t> local(std::size_t(whole.num_active()), -1);  // whole active index -> ours
  for (index_t a = 0; a < n; ++a) {
    const index_t w = cells[std::size_t(a)];
    if (w < 0 || w >= whole.num_active() || local[std::size_t(w)] >= 0)
      throw std::invalid_argument(fmt::format("grid part: cell {} repeated or not active", w));
    local[std::size_t(w)] = a;
    global_[a] = whole.global_[w], active_[whole.global_[w]] = a;
    depth_[a] = whole.depth_[w], pv_ref_[a] = whole.pv_ref_[w];
  }
  // Our faces listed by their lower-numbered cell, each cell's in the whole grid's order of its faces.
  const CellFaces cf = whole.cell_faces();
  face_start_.assign(std::size_t(n) + 1, 0);
  std::vector<Face> faces;
  for (index_t a = 0; a < n; ++a) {
    const index_t w = cells[std::size_t(a)];
    for (index_t q = cf.ptr[w]; q < cf.ptr[w + 1]; ++q) {
      const Face& f = whole.faces_[cf.face[q]];
      const index_t b = local[std::size_t(f.a + f.b - w)];
      if (b > a) faces.push_back(Face{a, b, f.trans});
    }
    face_start_[a + 1] = index_t(faces.size());
  }
  faces_.resize(faces.size());
  std::copy(faces.begin(), faces.end(), faces_.data());
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
  if (owned_ >= 0) {
    // A rank's part: its numbering is not the geometric one. Each cell's faces in the order of faces() (a
    // counting sort by both cells).
    const index_t n = num_active();
    CellFaces cf;
    cf.ptr.resize(static_cast<std::size_t>(n) + 1);
    std::fill(cf.ptr.data(), cf.ptr.data() + n + 1, index_t(0));
    for (std::size_t f = 0; f < faces_.size(); ++f) ++cf.ptr[faces_[f].a + 1], ++cf.ptr[faces_[f].b + 1];
    for (index_t a = 0; a < n; ++a) cf.ptr[a + 1] += cf.ptr[a];
    cf.face.resize(static_cast<std::size_t>(cf.ptr[n]));
    std::vector<index_t> next(cf.ptr.data(), cf.ptr.data() + n);
    for (std::size_t f = 0; f < faces_.size(); ++f) {
      cf.face[next[std::size_t(faces_[f].a)]++] = index_t(f);
      cf.face[next[std::size_t(faces_[f].b)]++] = index_t(f);
    }
    return cf;
  }
  // Cell a's faces in the order of faces(): first those it shares with lower-numbered cells (faces
  // listed by their a: its z-, y- and x- neighbours, which are numbered in that order), then its own
  // (face_start_[a] .. face_start_[a + 1]: toward x+, y+, z+). The same lists as a counting sort of
  // faces() by both cells, built per cell in parallel.
  const index_t n = num_active();
  const int nx = spec_.nx, ny = spec_.ny;
  const index_t plane = index_t(nx) * ny;
  // The face from lower-numbered cell l to cell a, or -1.
  const auto face_from = [&](index_t l, index_t a) -> index_t {
    if (l < 0) return -1;
    for (index_t f = face_start_[l]; f < face_start_[l + 1]; ++f)
      if (faces_[f].b == a) return f;
    return -1;
  };
  const auto incoming = [&](index_t a, index_t* out) {
    const index_t c = global_[a];
    const index_t i = c % nx, j = (c / nx) % ny, k = c / plane;
    int m = 0;
    for (const index_t f : {k > 0 ? face_from(active_[c - plane], a) : -1, j > 0 ? face_from(active_[c - nx], a) : -1,
                            i > 0 ? face_from(active_[c - 1], a) : -1})
      if (f >= 0) {
        if (out) out[m] = f;
        ++m;
      }
    return m;
  };
  CellFaces cf;
  cf.ptr.resize(static_cast<std::size_t>(n) + 1);
  cf.ptr[0] = 0;
  const bool par = kernels::cpu::parallel_worth(size64_t(n));
#pragma omp parallel for schedule(static) if (par)
  for (index_t a = 0; a < n; ++a) cf.ptr[a + 1] = incoming(a, nullptr) + (face_start_[a + 1] - face_start_[a]);
  for (index_t a = 0; a < n; ++a) cf.ptr[a + 1] += cf.ptr[a];
  cf.face.resize(static_cast<std::size_t>(cf.ptr[n]));
#pragma omp parallel for schedule(static) if (par)
  for (index_t a = 0; a < n; ++a) {
    index_t* out = cf.face.data() + cf.ptr[a];
    out += incoming(a, out);
    for (index_t f = face_start_[a]; f < face_start_[a + 1]; ++f) *out++ = f;
  }
  return cf;
}

}  // namespace blockres::physics
