// Scalar test matrices of `blockres bench amg` (see amg_bench_matrices.hpp).
#include "miniapp/bench/amg_bench_matrices.hpp"

#include "linalg/preconditioners/cpr/cpr_preconditioner.hpp"
#include "miniapp/io/deck.hpp"
#include "physics/model_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>
#include <stdexcept>

namespace blockres::amgbench {

std::uint64_t hash64(std::uint64_t z)
{
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double normal(std::uint64_t seed, std::uint64_t i)
{
  const std::uint64_t s = hash64(seed * 0x100000001b3ULL + 0x5851f42d4c957f2dULL);
  // Two uniforms in (0, 1] and [0, 1) from 53 random bits each.
  const double u1 = (double(hash64(s + 2 * i) >> 11) + 1.0) * 0x1.0p-53;
  const double u2 = double(hash64(s + 2 * i + 1) >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::vector<double> lognormal_permeability(size64_t cells, double std_log, std::uint64_t seed)
{
  std::vector<double> k(static_cast<std::size_t>(cells));
#pragma omp parallel for schedule(static)
  for (size64_t c = 0; c < cells; ++c) k[c] = std::exp(std_log * normal(seed, static_cast<std::uint64_t>(c)));
  return k;
}

ScalarMatrix finite_volume_7(const FvSpec& s)
{
  if (s.nx < 1 || s.ny < 1 || s.nz < 1) throw std::invalid_argument("finite_volume_7: grid sides must be >= 1");
  const size64_t nx = s.nx, ny = s.ny, nz = s.nz, plane = nx * ny, n = plane * nz;
  if (n > std::numeric_limits<index_t>::max())
    throw std::invalid_argument(fmt::format("finite_volume_7: {} cells do not fit 32-bit row indices", n));
  if (!s.perm.empty() && static_cast<size64_t>(s.perm.size()) != n)
    throw std::invalid_argument("finite_volume_7: perm must have nx ny nz values");
  // 7 n minus one entry per boundary face.
  const size64_t nnz = 7 * n - 2 * (plane + nx * nz + ny * nz);
  if (nnz > std::numeric_limits<index_t>::max())
    throw std::invalid_argument(
        fmt::format("finite_volume_7: {} nonzeros do not fit 32-bit column pointers (grid {}x{}x{})", nnz, nx, ny, nz));

  ScalarMatrix A;
  A.pattern.nrows = A.pattern.ncols = static_cast<index_t>(n);
  A.pattern.row_ptr.resize(static_cast<std::size_t>(n) + 1);
  A.pattern.col_ind.resize(static_cast<std::size_t>(nnz));
  A.values.resize(static_cast<std::size_t>(nnz));
  index_t* rp = A.pattern.row_ptr.data();
  index_t* ci = A.pattern.col_ind.data();
  double* v = A.values.data();
  const double* k = s.perm.empty() ? nullptr : s.perm.data();
  auto perm = [&](size64_t c) { return k ? k[c] : 1.0; };
  auto harmonic = [](double a, double b) { return a + b > 0 ? 2.0 * a * b / (a + b) : 0.0; };

  // Row pointers in closed form, so the loop over z-planes is parallel: a plane's rows hold
  // e_xy = 5 nx ny - 2 nx - 2 ny entries within the plane (diagonal, x and y neighbours) plus nx ny per
  // z-neighbour plane that exists.
  const size64_t e_xy = 5 * plane - 2 * nx - 2 * ny;
#pragma omp parallel for schedule(static)
  for (size64_t kk = 0; kk < nz; ++kk) {
    size64_t pos = kk * e_xy + plane * (std::max<size64_t>(kk - 1, 0) + std::min<size64_t>(kk, nz - 1));
    for (size64_t j = 0; j < ny; ++j)
      for (size64_t i = 0; i < nx; ++i) {
        rp[kk * plane + j * nx + i] = static_cast<index_t>(pos);
        pos += 1 + (i > 0) + (i + 1 < nx) + (j > 0) + (j + 1 < ny) + (kk > 0) + (kk + 1 < nz);
      }
  }
  rp[n] = static_cast<index_t>(nnz);

#pragma omp parallel for schedule(static)
  for (size64_t kk = 0; kk < nz; ++kk)
    for (size64_t j = 0; j < ny; ++j)
      for (size64_t i = 0; i < nx; ++i) {
        const size64_t c = kk * plane + j * nx + i;
        const double kc = perm(c);
        size64_t q = rp[c];
        double diag = s.accumulation;
        auto couple = [&](bool inside, size64_t other, double mult) {
          if (inside) {
            const double t = mult * harmonic(kc, perm(other));
            ci[q] = static_cast<index_t>(other);
            v[q] = -t;
            ++q;
            diag += t;
          } else if (s.dirichlet_boundary) {
            diag += mult * kc;
          }
        };
        // Columns in increasing order: -z, -y, -x, the diagonal, +x, +y, +z.
        couple(kk > 0, c - plane, s.mult_z);
        couple(j > 0, c - nx, s.mult_y);
        couple(i > 0, c - 1, s.mult_x);
        const size64_t dq = q++;
        ci[dq] = static_cast<index_t>(c);
        couple(i + 1 < nx, c + 1, s.mult_x);
        couple(j + 1 < ny, c + nx, s.mult_y);
        couple(kk + 1 < nz, c + plane, s.mult_z);
        v[dq] = diag;
      }
  return A;
}

ScalarMatrix generate(const std::string& kind, int n, std::uint64_t seed)
{
  if (n < 2) throw std::invalid_argument(fmt::format("bench amg: grid side {} is below 2", n));
  FvSpec s;
  s.nx = s.ny = s.nz = n;
  const size64_t cells = size64_t(n) * n * n;
  if (kind == "poisson") {
    s.dirichlet_boundary = true;
  } else if (kind == "lognormal1" || kind == "lognormal3" || kind == "anisotropic") {
    const double std_log = kind == "lognormal3" ? 3.0 : 1.0;
    const std::uint64_t offset = kind == "lognormal1" ? 1 : kind == "lognormal3" ? 2 : 3;
    s.perm = lognormal_permeability(cells, std_log, seed + offset);
    s.dirichlet_boundary = false;
    s.accumulation = pressure_accumulation;
    if (kind == "anisotropic") s.mult_z = anisotropy_kz_over_kxy;
  } else {
    throw std::invalid_argument(
        fmt::format("bench amg: unknown matrix kind '{}' (poisson, lognormal1, lognormal3, anisotropic)", kind));
  }
  ScalarMatrix A = finite_volume_7(s);
  A.kind = kind;
  A.side = n;
  A.name = fmt::format("{}_{}", kind, n);
  return A;
}

std::string describe_kind(const std::string& kind)
{
  if (kind == "poisson")
    return "7-point Poisson on n^3 unit cells, Dirichlet boundaries: diagonal 6, off-diagonals -1";
  if (kind == "lognormal1" || kind == "lognormal3")
    return fmt::format("two-point flux finite volumes on n^3 unit cells, harmonic face transmissibilities, "
                       "log-normal permeability exp({} N(0,1)) per cell (uncorrelated, seed + {}), no-flow "
                       "boundaries, accumulation {} on the diagonal",
                       kind == "lognormal3" ? 3 : 1, kind == "lognormal3" ? 2 : 1, pressure_accumulation);
  if (kind == "anisotropic")
    return fmt::format("lognormal1 (std_log 1, seed + 3) with k_z = {} k_xy: vertical transmissibilities scaled by {}",
                       anisotropy_kz_over_kxy, anisotropy_kz_over_kxy);
  if (kind == "deck")
    return "CPR pressure matrix W^T A P (quasi-IMPES weights) of the deck's Jacobian at its initial state, dt = "
           "schedule.dt_initial";
  return kind;
}

ScalarMatrix deck_pressure_matrix(const ExecPtr& e, const std::string& deck, const std::vector<std::string>& overrides)
{
  const RunConfig cfg = load_deck(deck, overrides);
  const physics::Grid grid(cfg.grid, cfg.rock);
  const auto model = physics::model_entry(cfg.model).create(e, grid, cfg.rock, cfg.grid.gravity, *cfg.model_input);
  BsrMatrix J(e, model->block_size(), model->pattern());
  Vector R(e, J.scalar_rows());
  const auto x_init = model->initial_state();
  Vector x(e, std::span<const double>(x_init)), x0(e, std::span<const double>(x_init));
  model->begin_step(x0);
  model->assemble(x, x0, cfg.schedule.dt_initial, R, J);

  CprOptions co;
  co.weights = CprWeights::quasi_impes;
  co.pressure = preconditioner_spec("none");
  co.second = preconditioner_spec("none");
  CprPreconditioner cpr(e, co);
  const SetupStatus st = cpr.setup(J);
  if (!st.ok) throw std::runtime_error(fmt::format("{}: pressure matrix: {}", deck, st.message));
  const BsrMatrix& Ap = *cpr.pressure_matrix();
  ScalarMatrix A;
  A.kind = "deck";
  A.name = "deck:" + std::filesystem::path(deck).stem().string();
  A.pattern.nrows = Ap.nrows();
  A.pattern.ncols = Ap.ncols();
  A.pattern.row_ptr = Ap.row_ptr().to_host();
  A.pattern.col_ind = Ap.col_ind().to_host();
  A.values = Ap.values().to_host();
  for (const double a : A.values)
    if (!std::isfinite(a)) throw std::runtime_error(fmt::format("{}: the pressure matrix has a non-finite entry", deck));
  return A;
}

double asymmetry(const ScalarMatrix& A)
{
  const auto& p = A.pattern;
  double amax = 0.0, dmax = 0.0;
  bool pattern_ok = true;
#pragma omp parallel for schedule(static) reduction(max : amax, dmax) reduction(&& : pattern_ok)
  for (index_t r = 0; r < p.nrows; ++r)
    for (index_t q = p.row_ptr[r]; q < p.row_ptr[r + 1]; ++q) {
      const index_t c = p.col_ind[q];
      amax = std::max(amax, std::abs(A.values[q]));
      const index_t* b = p.col_ind.data() + p.row_ptr[c];
      const index_t* e = p.col_ind.data() + p.row_ptr[c + 1];
      const index_t* t = std::lower_bound(b, e, r);
      if (t == e || *t != r) {
        pattern_ok = false;
        continue;
      }
      dmax = std::max(dmax, std::abs(A.values[q] - A.values[t - p.col_ind.data()]));
    }
  if (!pattern_ok) return std::numeric_limits<double>::infinity();
  return amax > 0 ? dmax / amax : 0.0;
}

void host_spmv(const ScalarMatrix& A, const double* x, double* y)
{
  const auto& p = A.pattern;
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < p.nrows; ++r) {
    double s = 0.0;
    for (index_t q = p.row_ptr[r]; q < p.row_ptr[r + 1]; ++q) s += A.values[q] * x[p.col_ind[q]];
    y[r] = s;
  }
}

}  // namespace blockres::amgbench
