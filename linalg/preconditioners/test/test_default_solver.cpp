// The default linear solver's table: the choice per (pressure unknown, block size, compressibility),
// the boundary block sizes of the second stage, and the description of solver choices.
#include "linalg/preconditioners/amg/amg_options.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi_options.hpp"
#include "linalg/preconditioners/cpr/cpr_options.hpp"
#include "linalg/preconditioners/default_solver.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace blockres {
namespace {

// Block ILU(0) in the block view with block ISAI(1) triangular solves and exact factors.
Ilu0Options block_ilu0_isai()
{
  Ilu0Options o;
  o.factor_view = IluFactorView::block;
  o.trisolve = TriangularSolve::isai;
  o.view = IsaiView::block;
  o.isai_power = 1;
  o.sweeps = 0;
  o.factor_sweeps = 0;
  return o;
}

// The default's second stage up to bs 8: 1 factor sweep, ISAI(1) with 3 sweeps per factor.
Ilu0Options default_second_stage()
{
  Ilu0Options o = block_ilu0_isai();
  o.factor_sweeps = 1;
  o.sweeps = 3;
  return o;
}

// The default CPR's AMG: CPR's own pressure stage with fp32 matrices and adaptive hierarchy reuse
// (issue 30) and Jacobi damped by 0.85 (issue 29), the W-cycle where the second stage is block ILU(0)/ISAI.
PreconditionerSpec default_amg(AmgCycle cycle)
{
  AmgOptions a = options_as<AmgOptions>(CprOptions{}.pressure);
  a.cycle = cycle;
  a.storage = StoragePrecision::fp32;
  a.refresh_growth = 0.3;
  a.jacobi_omega = 0.85;  // issue 29 item 3
  return {"amg", a};
}

TEST(DefaultSolver, PressureUnknownGetsFgmresWithCpr)
{
  for (const int bs : {1, 2, 3, 8, 9, 16, 32, 64}) {
    SCOPED_TRACE(bs);
    const DefaultLinearSolver d = default_linear_solver({.block_size = bs, .pressure_unknown = true, .compressible = true});
    EXPECT_EQ(d.krylov.method, KrylovMethod::fgmres);
    EXPECT_EQ(d.krylov.restart, 30);
    EXPECT_EQ(d.krylov.max_iterations, 1000);
    EXPECT_EQ(d.krylov.rel_tol, 1e-4);
    // inexact Newton's largest forcing term (issue 30): 0.01 up to bs 8, 0.001 to 16, the fixed term above
    EXPECT_EQ(d.eta_max, bs <= 8 ? 0.01 : bs <= 16 ? 0.001 : 0.0);
    ASSERT_EQ(d.preconditioner.type, "cpr");
    const CprOptions& c = options_as<CprOptions>(d.preconditioner);
    EXPECT_EQ(c.weights, CprWeights::true_impes);
    EXPECT_EQ(c.pressure.type, "amg");
    // The second stage by block size: block ILU(0)/ISAI with sweeps and the W-cycle up to 8,
    // block-Jacobi and CPR's own pressure stage (AMG V-cycle) from 9.
    if (bs <= 8) {
      EXPECT_EQ(c.pressure, default_amg(AmgCycle::w));
      EXPECT_EQ(c.second, (PreconditionerSpec{"ilu0", default_second_stage()}));
      EXPECT_EQ(d.description, "FGMRES(30) + CPR(true_impes; pressure: AMG W-cycle in fp32; second stage: block ILU(0)/ISAI "
                               "(1 factor sweep, 3 ISAI sweeps))");
      EXPECT_NE(d.reason.find("block ILU(0)/ISAI second stage with ISAI sweeps and an AMG W-cycle at block size <= 8 "
                              "and <= 160000 unknowns, for"),
                std::string::npos)
          << d.reason;
    } else {
      EXPECT_EQ(c.pressure, default_amg(AmgCycle::v));
      EXPECT_EQ(c.second, (PreconditionerSpec{"block_jacobi", BlockJacobiOptions{}}));
      EXPECT_EQ(d.description, "FGMRES(30) + CPR(true_impes; pressure: AMG in fp32; second stage: block-Jacobi)");
      EXPECT_NE(d.reason.find("block-Jacobi second stage above block size 8"), std::string::npos) << d.reason;
    }
    EXPECT_NE(d.reason.find("CPR for the pressure unknown"), std::string::npos) << d.reason;
  }
  EXPECT_EQ(default_ilu_max_block_size, 8);
}

// The second stage by size: block ILU(0)/ISAI with sweeps and the W-cycle up to 160k unknowns (cells x
// block size), block-Jacobi with the V-cycle above; the reason names the count. 0 cells (unknown) is small.
TEST(DefaultSolver, LargeSystemsGetBlockJacobi)
{
  EXPECT_EQ(default_ilu_max_unknowns, 160000);
  for (const int bs : {1, 2, 3, 8}) {
    SCOPED_TRACE(bs);
    const long long at = default_ilu_max_unknowns / bs;  // the most cells that are still small
    const DefaultLinearSolver small =
        default_linear_solver({.block_size = bs, .pressure_unknown = true, .compressible = true, .cells = at});
    EXPECT_EQ(options_as<CprOptions>(small.preconditioner).second.type, "ilu0");
    EXPECT_NE(small.reason.find(fmt::format("({} here)", at * bs)), std::string::npos) << small.reason;
    const long long over = (default_ilu_max_unknowns + bs) / bs;  // the fewest cells above it
    const DefaultLinearSolver large =
        default_linear_solver({.block_size = bs, .pressure_unknown = true, .compressible = true, .cells = over});
    const CprOptions& c = options_as<CprOptions>(large.preconditioner);
    EXPECT_EQ(c.second, (PreconditionerSpec{"block_jacobi", BlockJacobiOptions{}}));
    EXPECT_EQ(c.pressure, default_amg(AmgCycle::v));
    EXPECT_EQ(large.description, "FGMRES(30) + CPR(true_impes; pressure: AMG in fp32; second stage: block-Jacobi)");
    EXPECT_NE(large.reason.find(fmt::format("block-Jacobi second stage above 160000 unknowns ({} here)", over * bs)),
              std::string::npos)
        << large.reason;
    const DefaultLinearSolver plain =
        default_linear_solver({.block_size = bs, .pressure_unknown = false, .compressible = true, .cells = over});
    EXPECT_EQ(plain.preconditioner, (PreconditionerSpec{"block_jacobi", BlockJacobiOptions{}}));
  }
  // 10M cells of oil-water: no overflow of the count.
  const DefaultLinearSolver huge =
      default_linear_solver({.block_size = 64, .pressure_unknown = true, .compressible = true, .cells = 10000000});
  EXPECT_EQ(options_as<CprOptions>(huge.preconditioner).second.type, "block_jacobi");
}

// Without any compressibility the accumulation blocks have no pressure column and true-IMPES weights
// do not exist: the default takes quasi-IMPES weights there and says why.
TEST(DefaultSolver, IncompressibleSystemGetsQuasiImpesWeights)
{
  for (const int bs : {2, 8, 9}) {
    SCOPED_TRACE(bs);
    const DefaultLinearSolver d = default_linear_solver({.block_size = bs, .pressure_unknown = true, .compressible = false});
    ASSERT_EQ(d.preconditioner.type, "cpr");
    const CprOptions& c = options_as<CprOptions>(d.preconditioner);
    EXPECT_EQ(c.weights, CprWeights::quasi_impes);
    EXPECT_EQ(c.second.type, bs <= 8 ? "ilu0" : "block_jacobi");
    EXPECT_NE(d.description.find("CPR(quasi_impes;"), std::string::npos) << d.description;
    EXPECT_NE(d.reason.find("quasi-IMPES weights: nothing is compressible"), std::string::npos) << d.reason;
  }
}

TEST(DefaultSolver, NoPressureUnknownGetsGmresWithTheSecondStagesRule)
{
  const DefaultLinearSolver small = default_linear_solver({.block_size = 8, .pressure_unknown = false, .compressible = true});
  EXPECT_EQ(small.krylov.method, KrylovMethod::gmres);
  EXPECT_EQ(small.preconditioner, (PreconditionerSpec{"ilu0", default_second_stage()}));
  EXPECT_EQ(small.description, "GMRES(30) + block ILU(0)/ISAI (1 factor sweep, 3 ISAI sweeps)");
  EXPECT_NE(small.reason.find("no pressure unknown"), std::string::npos) << small.reason;
  const DefaultLinearSolver large = default_linear_solver({.block_size = 9, .pressure_unknown = false, .compressible = false});
  EXPECT_EQ(large.krylov.method, KrylovMethod::gmres);
  EXPECT_EQ(large.preconditioner, (PreconditionerSpec{"block_jacobi", BlockJacobiOptions{}}));
  EXPECT_EQ(large.description, "GMRES(30) + block-Jacobi");
}

TEST(DefaultSolver, BlockSizeOutsideTheRangeIsAnError)
{
  for (const int bs : {0, -1, 65}) {
    SCOPED_TRACE(bs);
    try {
      (void)default_linear_solver({.block_size = bs, .pressure_unknown = true, .compressible = true});
      ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("block size " + std::to_string(bs) + " is not in 1..64"), std::string::npos)
          << e.what();
    }
  }
}

TEST(DefaultSolver, DescribesEverySolverChoice)
{
  KrylovConfig k;
  k.method = KrylovMethod::bicgstab;
  EXPECT_EQ(describe_linear_solver(k, {"block_jacobi", BlockJacobiOptions{}}), "BiCGSTAB + block-Jacobi");
  k.method = KrylovMethod::gmres, k.restart = 50;
  Ilu0Options exact;  // scalar view, exact triangular solves
  EXPECT_EQ(describe_linear_solver(k, {"ilu0", exact}), "GMRES(50) + ILU(0)");
  k.method = KrylovMethod::idr, k.idr_s = 4;
  Ilu0Options isai2;
  isai2.trisolve = TriangularSolve::isai, isai2.isai_power = 2;
  EXPECT_EQ(describe_linear_solver(k, {"ilu0", isai2}), "IDR(4) + ILU(0)/ISAI(2)");
  k.method = KrylovMethod::cg;
  EXPECT_EQ(describe_linear_solver(k, {"jacobi", JacobiOptions{}}), "CG + point Jacobi");
  BlockJacobiOptions agglomerated;
  agglomerated.max_block_size = 16;
  EXPECT_EQ(describe_preconditioner({"block_jacobi", agglomerated}), "block-Jacobi (blocks up to 16 rows)");
  agglomerated.max_block_size = 1;
  EXPECT_EQ(describe_preconditioner({"block_jacobi", agglomerated}), "point Jacobi");
  Ilu0Options iterative = block_ilu0_isai();
  iterative.factor_sweeps = 1;
  EXPECT_EQ(describe_preconditioner({"ilu0", iterative}), "block ILU(0)/ISAI (1 factor sweep)");
  iterative.factor_sweeps = 3;
  EXPECT_EQ(describe_preconditioner({"ilu0", iterative}), "block ILU(0)/ISAI (3 factor sweeps)");
  iterative.sweeps = 2;
  EXPECT_EQ(describe_preconditioner({"ilu0", iterative}), "block ILU(0)/ISAI (3 factor sweeps, 2 ISAI sweeps)");
  iterative.factor_sweeps = 0;
  iterative.sweeps = 1;
  EXPECT_EQ(describe_preconditioner({"ilu0", iterative}), "block ILU(0)/ISAI (1 ISAI sweep)");
  EXPECT_EQ(describe_preconditioner(preconditioner_spec("amg")), "AMG");
  EXPECT_EQ(describe_preconditioner(preconditioner_spec("isai")), "ISAI");
  EXPECT_EQ(describe_preconditioner(preconditioner_spec("none")), "none");
  EXPECT_EQ(describe_preconditioner(preconditioner_spec("cpr")),
            "CPR(quasi_impes; pressure: AMG; second stage: block-Jacobi)");
  // Every registered preconditioner has a description of its own, not its registry name.
  for (const PreconditionerEntry& e : registered_preconditioners()) {
    SCOPED_TRACE(e.name);
    const std::string s = describe_preconditioner(preconditioner_spec(e.name));
    EXPECT_FALSE(s.empty());
    if (e.name != "none") {
      EXPECT_NE(s, e.name);
    }
  }
}

}  // namespace
}  // namespace blockres
