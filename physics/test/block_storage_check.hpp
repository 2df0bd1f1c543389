// Model::set_block_storage (issue 33: a distributed run assembles straight into the distributed matrix's parts):
// storage maps to try, and the check that a model whose blocks were moved writes every block, bit for bit, where the
// map sends it, and the same residual and well results, on either backend. Each model's tests call it.
#pragma once

#include "linalg/test/random_matrix.hpp"
#include "physics/model.hpp"
#include "physics/test/grid_fixture.hpp"
#include "physics/units.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace blockres::test {

// The grid of a fixture enlarged to nx x ny x nz cells (many CUDA thread blocks of rows), with a lognormal
// permeability, uniform porosity and one inactive cell; the fixture's wells stay where they are (inside 5 x 3 x 3).
inline void enlarge_grid(GridRockSetup& s, int nx, int ny, int nz, unsigned long long seed)
{
  s.grid.nx = nx, s.grid.ny = ny, s.grid.nz = nz;
  s.grid.dx.assign(std::size_t(nx), 9.0), s.grid.dy.assign(std::size_t(ny), 11.0), s.grid.dz.assign(std::size_t(nz), 2.5);
  const std::size_t n = std::size_t(nx) * ny * nz;
  s.rock.porosity.assign(n, 0.2);
  s.rock.porosity[n / 2] = 0.0;
  s.rock.kx = physics::lognormal_field(nx, ny, nz, std::log(150.0), 1.0, 2.0, seed);
  for (auto& k : s.rock.kx) k *= units::millidarcy;
  s.rock.ky = s.rock.kx, s.rock.kz = s.rock.kx;
  for (auto& k : s.rock.kz) k *= 0.1;
}

// Storage maps of a pattern: "random" (any permutation), and "distributed" (as a distributed matrix's: in every
// third band of 100 rows a random third of the rows have their last block moved behind all the other rows' blocks,
// like ghost-column blocks, the rest keep their order; the last tenth of the rows, like a rank's ghost rows, stay in
// place behind the moved blocks). The bands leave some CUDA thread blocks' stretches of rows stored contiguously.
inline std::vector<std::pair<std::string, std::vector<index_t>>> storage_maps(const BsrPattern& p)
{
  const index_t nnzb = p.nnzb();
  std::vector<index_t> random(static_cast<std::size_t>(nnzb));
  std::iota(random.begin(), random.end(), 0);
  std::shuffle(random.begin(), random.end(), rng());

  const index_t own = p.nrows - p.nrows / 10, kown = p.row_ptr[std::size_t(own)];
  std::vector<bool> moved(static_cast<std::size_t>(nnzb), false);
  for (index_t r = 0; r < own; ++r)
    if (p.row_ptr[r + 1] > p.row_ptr[r] && (r / 100) % 3 == 1 && rng()() % 3 == 0)
      moved[std::size_t(p.row_ptr[r + 1] - 1)] = true;
  std::vector<index_t> dist(static_cast<std::size_t>(nnzb));
  index_t front = 0, tail = 0;
  for (index_t k = 0; k < kown; ++k) front += !moved[std::size_t(k)];
  for (index_t k = 0, f = 0; k < kown; ++k) dist[std::size_t(k)] = moved[std::size_t(k)] ? front + tail++ : f++;
  for (index_t k = kown; k < nnzb; ++k) dist[std::size_t(k)] = k;
  return {{"random", random}, {"distributed", dist}};
}

// The model `make` builds, assembled at (x, x0, dt) with its blocks in pattern order and, on fresh models, with each
// of storage_maps(): every block bit for bit at its storage position, R and the well results bit for bit. Outputs are
// poisoned (NaN) first, so a block the moved model leaves unwritten fails. Then the map's checks: not a permutation
// -> std::invalid_argument, a second call -> std::logic_error.
inline void expect_moved_blocks_identical(const ExecPtr& exec, const std::function<std::unique_ptr<physics::Model>()>& make,
                                          const std::vector<double>& hx, const std::vector<double>& hx0, double dt)
{
  const double nan_v = std::numeric_limits<double>::quiet_NaN();
  auto assemble = [&](physics::Model& m, std::vector<double>& J, std::vector<double>& R) {
    const int bs = m.block_size();
    const Vector x(exec, std::span<const double>(hx)), x0(exec, std::span<const double>(hx0));
    Vector Rv(exec, std::span<const double>(std::vector<double>(hx.size(), nan_v)));
    Array<double> Jv(exec, std::span<const double>(
                               std::vector<double>(std::size_t(m.pattern().nnzb()) * std::size_t(bs * bs), nan_v)));
    m.begin_step(x0);
    m.assemble(x, x0, dt, Rv, Jv);
    J = Jv.to_host(), R = Rv.to_host();
  };
  auto same_bits = [](const double* a, const double* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(double)) == 0; };

  const std::unique_ptr<physics::Model> ref = make();
  std::vector<double> Jref, Rref;
  assemble(*ref, Jref, Rref);
  const auto wref = ref->well_results();
  const int bs = ref->block_size();
  const std::size_t bb = std::size_t(bs) * bs;
  const index_t nnzb = ref->pattern().nnzb();
  ASSERT_GT(nnzb, 0);
  for (std::size_t q = 0; q < Jref.size(); ++q) ASSERT_FALSE(std::isnan(Jref[q])) << "pattern-order entry " << q << " unwritten";

  for (const auto& [name, map] : storage_maps(ref->pattern())) {
    SCOPED_TRACE(name + " storage map");
    const std::unique_ptr<physics::Model> m = make();
    m->set_block_storage(map);
    std::vector<double> J, R;
    assemble(*m, J, R);
    EXPECT_TRUE(same_bits(R.data(), Rref.data(), R.size())) << "residual";
    index_t wrong = 0;
    for (index_t k = 0; k < nnzb; ++k)
      if (!same_bits(J.data() + std::size_t(map[std::size_t(k)]) * bb, Jref.data() + std::size_t(k) * bb, bb)) {
        if (wrong++ < 5) ADD_FAILURE() << "block " << k << " (stored at " << map[std::size_t(k)] << ") differs";
      }
    EXPECT_EQ(wrong, 0);
    const auto w = m->well_results();
    ASSERT_EQ(w.size(), wref.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
      EXPECT_EQ(w[i].bhp, wref[i].bhp) << "well " << i;
      EXPECT_EQ(w[i].rates, wref[i].rates) << "well " << i;
    }
    EXPECT_THROW(m->set_block_storage(map), std::logic_error);
  }

  std::vector<index_t> bad(static_cast<std::size_t>(nnzb));
  std::iota(bad.begin(), bad.end(), 0);
  bad.back() = 0;  // block 0 twice
  EXPECT_THROW(make()->set_block_storage(bad), std::invalid_argument);
  bad.pop_back();  // too short
  EXPECT_THROW(make()->set_block_storage(bad), std::invalid_argument);
}

}  // namespace blockres::test
