// Scalar test matrices of `blockres bench amg`: 7-point Poisson, two-point-flux pressure matrices with
// log-normal (optionally anisotropic) permeability, and the CPR pressure matrix of a deck's first Jacobian.
#pragma once

#include "linalg/bsr_matrix.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace blockres::amgbench {

// A bs = 1 matrix on the host: CSR pattern (sorted columns, diagonal present) and values.
struct ScalarMatrix {
  std::string name;  // e.g. "poisson_64", "lognormal3_64", "deck:quarter_five_spot"
  std::string kind;  // "poisson", "lognormal1", "lognormal3", "anisotropic", "deck"
  int side = 0;      // grid side of the generated matrices (0 for decks)
  BsrPattern pattern;
  std::vector<double> values;
  index_t rows() const { return pattern.nrows; }
  size64_t nnz() const { return pattern.nnzb(); }
};

// The generated kinds, in their default order.
inline const std::vector<std::string>& generated_kinds()
{
  static const std::vector<std::string> k{"poisson", "lognormal1", "lognormal3", "anisotropic"};
  return k;
}

// Counter-based random numbers (splitmix64), the same whatever the thread count: normal(seed, i) is a
// standard normal variate (Box-Muller on two hashed uniforms), one per index i.
std::uint64_t hash64(std::uint64_t z);
double normal(std::uint64_t seed, std::uint64_t i);

// Permeability of every cell (x fastest): k_c = exp(std_log * normal(seed, c)), so log k has mean 0
// (geometric mean 1) and standard deviation std_log. Parallel.
std::vector<double> lognormal_permeability(size64_t cells, double std_log, std::uint64_t seed);

// Cell-centred finite volumes on an nx x ny x nz grid of unit cubes, cells numbered x fastest, the
// 7-point pattern (neighbours outside the grid left out), columns sorted. Face (a, b) in direction d
// couples with the two-point transmissibility T = mult_d * 2 k_a k_b / (k_a + k_b) (harmonic mean;
// k = 1 when perm is empty): a_ab = a_ba = -T, a_aa = sum of the cell's T + boundary + accumulation.
//   dirichlet_boundary: every boundary face adds mult_d * k_a to the diagonal (p = 0 outside);
//                       false: no-flow boundaries (nothing added).
//   accumulation:       added to every diagonal entry (the compressibility term c phi V / dt of a
//                       pressure equation).
// Symmetric, diagonal positive, off-diagonals negative, row sums >= 0 (an M-matrix when some row sum is
// positive). Built in parallel; throws when nnz passes 2^31 - 1 (index_t column pointers).
struct FvSpec {
  int nx = 0, ny = 0, nz = 0;
  std::vector<double> perm;                 // nx ny nz values, or empty for k = 1
  double mult_x = 1.0, mult_y = 1.0, mult_z = 1.0;
  bool dirichlet_boundary = true;
  double accumulation = 0.0;
};
ScalarMatrix finite_volume_7(const FvSpec& spec);

// The generated kinds on an n^3 grid:
//   poisson      the standard 7-point Poisson matrix: k = 1, Dirichlet boundaries (diagonal 6, off-diagonals -1);
//   lognormal1   pressure-like: log-normal k with std_log 1, no-flow boundaries, accumulation 1e-3 (= 1e-3 of
//                the transmissibility of a face between two cells of the median permeability 1);
//   lognormal3   the same with std_log 3 (k over about 8 orders of magnitude);
//   anisotropic  lognormal1 with k_z = k_xy / 10 (mult_z = 0.1).
// The random field of a kind is drawn with seed + (1, 2, 3 for lognormal1, lognormal3, anisotropic), so
// runs with the same seed build the same matrices.
constexpr double pressure_accumulation = 1e-3;
constexpr double anisotropy_kz_over_kxy = 0.1;
ScalarMatrix generate(const std::string& kind, int n, std::uint64_t seed);
// One line describing what generate(kind, ...) builds (for the report).
std::string describe_kind(const std::string& kind);

// The CPR pressure matrix of a deck's first Jacobian: the deck (with --set overrides) is loaded, its model
// built on `exec`, the Jacobian assembled at the initial state with dt = schedule.dt_initial, and
// CprPreconditioner (quasi-IMPES weights, both stages none) forms A_p = W^T A P; A_p is copied to the host.
ScalarMatrix deck_pressure_matrix(const ExecPtr& exec, const std::string& deck, const std::vector<std::string>& overrides);

// max |a_ij - a_ji| over the pattern relative to max |a_ij| (infinity when the pattern is not symmetric).
double asymmetry(const ScalarMatrix& A);

// y = A x on the host (the benchmark's independent reference), parallel.
void host_spmv(const ScalarMatrix& A, const double* x, double* y);

}  // namespace blockres::amgbench
