// The preconditioner registry and the name tables: an empty deck table gives every entry its
// Options{} (the one place defaults live), CPR's stage defaults, every registered name and every
// enum value through its name table and back, and the deck's messages for an unknown type, a key of
// another type and an unknown key, word for word as the deck reader wrote them before the registry.
#include "linalg/preconditioners/registry.hpp"

#include "input/section.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/amg/amg_options.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi.hpp"
#include "linalg/preconditioners/cpr/cpr_options.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "linalg/preconditioners/isai/isai_options.hpp"
#include "linalg/preconditioners/none/none.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <set>
#include <string>
#include <vector>

using namespace blockres;

namespace {

const deck::Deck kDeck{"deck.toml", "."};
const std::string kPath = "solver.linear.preconditioner";

// The table [solver.linear.preconditioner] of `text` (its own lines, the header on line 1).
struct Table {
  toml::table root;
  explicit Table(const std::string& text)
      : root(toml::parse("[solver.linear.preconditioner]\n" + text, std::string_view("deck.toml")))
  {
  }
  deck::Section section() { return deck::Section(kDeck, *root.at_path(kPath).as_table(), kPath); }
};

PreconditionerSpec read_table(const std::string& text, PreconditionerRole role = PreconditionerRole::solver)
{
  Table t(text);
  deck::Section s = t.section();
  const PreconditionerSpec defaults[] = {{"block_jacobi", BlockJacobiOptions{}}};
  return read_preconditioner(s, defaults, role);
}

std::string error_of(const std::string& text, PreconditionerRole role = PreconditionerRole::solver)
{
  try {
    read_table(text, role);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// Every value of E: named, found by its name, to_string'ed to it; the table holds nothing else.
template <class E, std::size_t N>
void expect_round_trip(const NameTable<E, N>& names, std::initializer_list<E> every_value)
{
  EXPECT_EQ(N, every_value.size());
  std::set<std::string_view> seen;
  for (const E v : every_value) {
    const std::string_view name = names.name(v);
    EXPECT_NE(name, "?") << int(v);
    EXPECT_TRUE(seen.insert(name).second) << name;
    EXPECT_EQ(names.find(name), v) << name;
    EXPECT_EQ(to_string(v), name);
  }
  EXPECT_FALSE(names.find("no such name"));
}

}  // namespace

TEST(PreconditionerRegistry, EmptyTableGivesOptionsDefaults)
{
  ASSERT_FALSE(registered_preconditioners().empty());
  for (const PreconditionerEntry& e : registered_preconditioners()) {
    Table t("");
    deck::Section s = t.section();
    const std::any read = e.read(s, e.defaults());
    EXPECT_TRUE(e.equal(read, e.defaults())) << e.name;
    // Through the deck reader: only the type given.
    EXPECT_EQ(read_table(fmt::format("type = \"{}\"", e.name)), preconditioner_spec(e.name)) << e.name;
  }
  // The same, field by field (each Options' defaulted operator==), for every Options struct.
  auto typed = [](auto defaults) {
    Table t("");
    deck::Section s = t.section();
    return blockres::read(s, defaults) == decltype(defaults){};
  };
  EXPECT_TRUE(typed(BlockJacobiOptions{}));
  EXPECT_TRUE(typed(JacobiOptions{}));
  EXPECT_TRUE(typed(Ilu0Options{}));
  EXPECT_TRUE(typed(IsaiOptions{}));
  EXPECT_TRUE(typed(AmgOptions{}));
  EXPECT_TRUE(typed(CprOptions{}));
  EXPECT_TRUE(typed(NoneOptions{}));
  // An empty table is the solver's default preconditioner, and the defaults are filled in.
  Table t("");
  deck::Section s = t.section();
  const PreconditionerSpec defaults[] = {{"block_jacobi", BlockJacobiOptions{}}};
  EXPECT_EQ(read_preconditioner(s, defaults, PreconditionerRole::solver), defaults[0]);
  EXPECT_EQ(t.root.at_path(kPath + ".type").value<std::string>(), "block_jacobi");
  EXPECT_EQ(t.root.at_path(kPath + ".factorization").value<std::string>(), "automatic");
}

// CPR's defaults are the deck's: AMG on the pressure, block-Jacobi second; a second stage of type
// ilu0 factors in the block view, a pressure stage of type ilu0 in the scalar view.
TEST(PreconditionerRegistry, CprStageDefaults)
{
  EXPECT_EQ(CprOptions{}.pressure, preconditioner_spec("amg"));
  EXPECT_EQ(CprOptions{}.second, preconditioner_spec("block_jacobi"));
  const auto cpr = options_as<CprOptions>(read_table("type = \"cpr\""));
  EXPECT_EQ(cpr, CprOptions{});
  const auto ilu = options_as<CprOptions>(read_table("type = \"cpr\"\n"
                                                     "[solver.linear.preconditioner.pressure]\ntype = \"ilu0\"\n"
                                                     "[solver.linear.preconditioner.second]\ntype = \"ilu0\""));
  EXPECT_EQ(ilu.pressure, (PreconditionerSpec{"ilu0", Ilu0Options{}}));
  EXPECT_EQ(ilu.second, (PreconditionerSpec{"ilu0", Ilu0Options{.factor_view = IluFactorView::block}}));
  const auto scalar = options_as<CprOptions>(
      read_table("type = \"cpr\"\n[solver.linear.preconditioner.second]\ntype = \"ilu0\"\nfactor_view = \"scalar\""));
  EXPECT_EQ(scalar.second, (PreconditionerSpec{"ilu0", Ilu0Options{}}));
}

TEST(PreconditionerRegistry, NamesRoundTrip)
{
  std::set<std::string_view> names;
  for (const PreconditionerEntry& e : registered_preconditioners()) {
    EXPECT_TRUE(names.insert(e.name).second) << e.name;
    EXPECT_EQ(find_preconditioner(e.name), &e);
    EXPECT_EQ(read_table(fmt::format("type = \"{}\"", e.name)).type, e.name);
    auto M = make_preconditioner(Executor::create_cpu(), preconditioner_spec(e.name));
    EXPECT_NE(M, nullptr) << e.name;
    if (e.cpr_stage) {
      EXPECT_EQ(read_table(fmt::format("type = \"{}\"", e.name), PreconditionerRole::cpr_stage).type, e.name);
    }
  }
  EXPECT_EQ(names, (std::set<std::string_view>{"block_jacobi", "jacobi", "ilu0", "isai", "amg", "cpr", "none"}));
  EXPECT_EQ(find_preconditioner("ilu1"), nullptr);
  EXPECT_THROW(preconditioner_spec("ilu1"), std::invalid_argument);
  EXPECT_THROW(make_preconditioner(Executor::create_cpu(), {"ilu0", IsaiOptions{}}), std::invalid_argument);

  expect_round_trip(block_factorization_names,
                    {BlockFactorization::gauss_jordan, BlockFactorization::gauss_huard,
                     BlockFactorization::gauss_huard_t, BlockFactorization::lu, BlockFactorization::automatic});
  expect_round_trip(triangular_solve_names, {TriangularSolve::exact, TriangularSolve::isai});
  expect_round_trip(isai_view_names, {IsaiView::scalar, IsaiView::block});
  expect_round_trip(ilu_factor_view_names, {IluFactorView::scalar, IluFactorView::block});
  expect_round_trip(cpr_weights_names, {CprWeights::quasi_impes, CprWeights::true_impes});
  expect_round_trip(amg_aggregation_names, {AmgAggregation::mis2, AmgAggregation::matching});
  expect_round_trip(amg_interpolation_names, {AmgInterpolation::plain, AmgInterpolation::smoothed});
  expect_round_trip(amg_smoother_names, {AmgSmoother::jacobi, AmgSmoother::l1_jacobi, AmgSmoother::ilu0});
  expect_round_trip(amg_cycle_names, {AmgCycle::v, AmgCycle::w});
  expect_round_trip(krylov_method_names, {KrylovMethod::bicgstab, KrylovMethod::gmres, KrylovMethod::idr,
                                          KrylovMethod::cg, KrylovMethod::fgmres});
  expect_round_trip(tolerance_reference_names, {ToleranceReference::initial_residual, ToleranceReference::rhs});
  // The deck spells every value as the name table does.
  const auto bj = options_as<BlockJacobiOptions>(read_table("factorization = \"gauss_huard_t\""));
  EXPECT_EQ(bj.factorization, BlockFactorization::gauss_huard_t);
}

// Point Jacobi is block-Jacobi on the 1x1 diagonal entries.
TEST(PreconditionerRegistry, JacobiIsBlockJacobiOnScalars)
{
  const ExecPtr e = Executor::create_cpu();
  auto M = make_preconditioner(e, preconditioner_spec("jacobi"));
  auto* bj = dynamic_cast<BlockJacobiPreconditioner*>(M.get());
  ASSERT_NE(bj, nullptr);
  BsrPattern p;
  p.nrows = p.ncols = 2;
  p.row_ptr = {0, 1, 2};
  p.col_ind = {0, 1};
  BsrMatrix A(e, 3, p);
  std::vector<double> v(18, 0.5);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i) v[b * 9 + i * 4] = 4.0;
  A.values().copy_from_host(v);
  ASSERT_TRUE(bj->setup(A).ok);
  EXPECT_EQ(bj->num_blocks(), 6);
  EXPECT_EQ(bj->largest_block(), 1);
}

// The messages of the deck reader before the registry (blockres at 1f02b1f, run on the same
// tables in a deck), word for word.
TEST(PreconditionerRegistry, DeckMessages)
{
  const std::string k = "deck.toml:";
  EXPECT_EQ(error_of("type = \"ilu1\""),
            k + "2:8: solver.linear.preconditioner.type: must be one of \"block_jacobi\", \"jacobi\", \"ilu0\", "
                "\"isai\", \"amg\", \"cpr\", \"none\" (got 'ilu1')");
  EXPECT_EQ(error_of("type = \"amg\"\ntrisolve = \"isai\""),
            k + "3:12: solver.linear.preconditioner.trisolve: only applies to type = \"ilu0\" (got 'isai')");
  EXPECT_EQ(error_of("type = \"amg\"\nisai_power = 2"),
            k + "3:14: solver.linear.preconditioner.isai_power: only applies to type = \"ilu0\" or \"isai\" (got 2)");
  EXPECT_EQ(error_of("type = \"jacobi\"\nmax_block_size = 2"),
            k + "3:18: solver.linear.preconditioner.max_block_size: only applies to type = \"block_jacobi\" (got 2)");
  EXPECT_EQ(error_of("type = \"ilu0\"\ntrisolv = \"isai\""),
            k + "3:1: solver.linear.preconditioner.trisolv: unknown key, did you mean 'trisolve'? (got 'isai')");
  EXPECT_EQ(error_of("type = \"cpr\"\n[solver.linear.preconditioner.second]\ntype = \"cpr\""),
            k + "4:8: solver.linear.preconditioner.second.type: must be one of \"block_jacobi\", \"jacobi\", "
                "\"ilu0\", \"isai\", \"amg\", \"none\" (got 'cpr')");
  EXPECT_EQ(error_of("type = \"cpr\"\n[solver.linear.preconditioner.second]\nweights = \"true_impes\""),
            k + "4:1: solver.linear.preconditioner.second.weights: unknown key (got 'true_impes')");
  // A CPR stage table on its own: cpr is not among its types.
  EXPECT_EQ(error_of("type = \"cpr\"", PreconditionerRole::cpr_stage),
            k + "2:8: solver.linear.preconditioner.type: must be one of \"block_jacobi\", \"jacobi\", \"ilu0\", "
                "\"isai\", \"amg\", \"none\" (got 'cpr')");
}

// The damped-Jacobi smoother's weight from a deck table: read for smoother = "jacobi" (the default) only,
// inside (0, 2) (damped Jacobi diverges on an SPD operator at omega >= 2 / rho(D^-1 A) >= 1, so 2 is never
// safe), and rejected for l1-Jacobi (undamped) and ILU(0).
TEST(PreconditionerRegistry, AmgJacobiOmegaKey)
{
  const auto a = options_as<AmgOptions>(read_table("type = \"amg\"\njacobi_omega = 0.85"));
  EXPECT_EQ(a.smoother, AmgSmoother::jacobi);
  EXPECT_EQ(a.jacobi_omega, 0.85);
  const auto d = options_as<AmgOptions>(read_table("type = \"amg\""));
  EXPECT_EQ(d.jacobi_omega, AmgOptions{}.jacobi_omega);
  const std::string k = "deck.toml:";
  EXPECT_EQ(error_of("type = \"amg\"\nsmoother = \"l1_jacobi\"\njacobi_omega = 0.9"),
            k + "4:16: solver.linear.preconditioner.jacobi_omega: only applies to smoother = \"jacobi\" (got 0.9)");
  EXPECT_NE(error_of("type = \"amg\"\nsmoother = \"ilu0\"\njacobi_omega = 0.9").find("only applies to smoother"),
            std::string::npos);
  for (const char* bad : {"0", "0.0", "2", "2.5", "-0.5"})
    EXPECT_NE(error_of(std::string("type = \"amg\"\njacobi_omega = ") + bad)
                  .find("solver.linear.preconditioner.jacobi_omega"),
              std::string::npos)
        << bad;
}

// AMG's cycle keys and the ILU(0) smoother's sweeps from a deck table; trisolve_sweeps belongs to
// smoother = "ilu0" only, and the values are range-checked.
TEST(PreconditionerRegistry, AmgCycleAndIluSmootherKeys)
{
  const auto a = options_as<AmgOptions>(
      read_table("type = \"amg\"\nsmoother = \"ilu0\"\ntrisolve_sweeps = 2\ncycle = \"w\"\ncycles = 3"));
  EXPECT_EQ(a.smoother, AmgSmoother::ilu0);
  EXPECT_EQ(a.trisolve_sweeps, 2);
  EXPECT_EQ(a.cycle, AmgCycle::w);
  EXPECT_EQ(a.cycles, 3);
  const auto d = options_as<AmgOptions>(read_table("type = \"amg\"\nsmoother = \"ilu0\""));
  EXPECT_EQ(d.trisolve_sweeps, 0);  // exact triangular solves
  EXPECT_EQ(d.cycle, AmgCycle::v);
  EXPECT_EQ(d.cycles, 1);
  const std::string k = "deck.toml:";
  EXPECT_EQ(error_of("type = \"amg\"\ntrisolve_sweeps = 2"),
            k + "3:19: solver.linear.preconditioner.trisolve_sweeps: only applies to smoother = \"ilu0\" (got 2)");
  EXPECT_NE(error_of("type = \"amg\"\ncycles = 0").find("solver.linear.preconditioner.cycles"), std::string::npos);
  EXPECT_NE(error_of("type = \"amg\"\ncycle = \"f\"").find("solver.linear.preconditioner.cycle: must be one of"),
            std::string::npos);
  EXPECT_NE(error_of("type = \"amg\"\nsmoother = \"ilu0\"\ntrisolve_sweeps = 17")
                .find("solver.linear.preconditioner.trisolve_sweeps"),
            std::string::npos);
}
