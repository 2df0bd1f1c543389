// The benches' preconditioner presets: every label resolves through the registry to the options the
// benches built by hand before the table (written out here as they were), the resolved text reads back
// to the same spec, an unknown label is an InputError listing the labels, bench isai's generated
// variants, bench model's "deck", and which presets are symmetric (what bench solver lets CG rely on).
#include "miniapp/bench/preconditioner_presets.hpp"

#include "input/error.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi_options.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "linalg/preconditioners/isai/isai_options.hpp"
#include "linalg/preconditioners/none/none.hpp"
#include "linalg/test/random_matrix.hpp"
#include "miniapp/io/deck.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

using namespace blockres;
using bench::preconditioner_preset;
using bench::read_bench_preconditioner;

namespace {

std::string error_of(const std::string& label)
{
  try {
    preconditioner_preset(label);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// The spec each bench built for a label before the preset table: bench model's preconditioner_of (none,
// jacobi, block_jacobi, block_jacobi_lu, ilu0, ilu0_isai, bilu0, bilu0_isai), bench solver's (none, jacobi,
// block_jacobi, ilu0, ilu0_isai, isai; the same as bench model's where both had the label, except jacobi
// and block_jacobi, below).
const std::map<std::string, PreconditionerSpec>& old_specs()
{
  static const std::map<std::string, PreconditionerSpec> specs = {
      {"none", {"none", NoneOptions{}}},
      {"jacobi", {"block_jacobi", BlockJacobiOptions{.factorization = BlockFactorization::automatic, .max_block_size = 1}}},
      {"block_jacobi",
       {"block_jacobi", BlockJacobiOptions{.factorization = BlockFactorization::automatic, .max_block_size = 0}}},
      {"block_jacobi_lu",
       {"block_jacobi", BlockJacobiOptions{.factorization = BlockFactorization::lu, .max_block_size = 0}}},
      {"ilu0",
       {"ilu0", Ilu0Options{.trisolve = TriangularSolve::exact, .isai_power = 1, .sweeps = 0, .view = IsaiView::scalar,
                            .factor_view = IluFactorView::scalar, .factor_sweeps = 0}}},
      {"ilu0_isai",
       {"ilu0", Ilu0Options{.trisolve = TriangularSolve::isai, .isai_power = 1, .sweeps = 0, .view = IsaiView::block,
                            .factor_view = IluFactorView::scalar, .factor_sweeps = 0}}},
      {"bilu0",
       {"ilu0", Ilu0Options{.trisolve = TriangularSolve::exact, .isai_power = 1, .sweeps = 0, .view = IsaiView::scalar,
                            .factor_view = IluFactorView::block, .factor_sweeps = 0}}},
      {"bilu0_isai",
       {"ilu0", Ilu0Options{.trisolve = TriangularSolve::isai, .isai_power = 1, .sweeps = 0, .view = IsaiView::block,
                            .factor_view = IluFactorView::block, .factor_sweeps = 0}}},
      {"isai", {"isai", IsaiOptions{.power = 1, .view = IsaiView::block}}},
  };
  return specs;
}

// z = M r on the CPU for a random r after M's setup on A, and M's name after the setup (where block-Jacobi
// reports the factorisation that "automatic" chose).
struct Applied {
  std::string name;
  std::vector<double> z;
};
Applied apply_once(const BsrMatrix& A, const PreconditionerSpec& spec, const std::vector<double>& r)
{
  auto M = make_preconditioner(A.exec_ptr(), spec);
  EXPECT_TRUE(M->setup(A).ok);
  Vector rv(A.exec_ptr(), std::span<const double>(r)), z(A.exec_ptr(), r.size());
  M->apply(rv, z);
  return {M->name(), z.to_host()};
}

}  // namespace

TEST(PreconditionerPresets, TheTableHoldsTheLabelsOfBothBenches)
{
  const std::vector<std::string> labels = {"none",      "jacobi", "block_jacobi", "block_jacobi_lu", "ilu0",
                                           "ilu0_isai", "bilu0",  "bilu0_isai",   "isai"};
  EXPECT_EQ(bench::preconditioner_preset_labels(), labels);
  EXPECT_EQ(bench::preconditioner_preset_list(),
            "none, jacobi, block_jacobi, block_jacobi_lu, ilu0, ilu0_isai, bilu0, bilu0_isai, isai");
  ASSERT_EQ(bench::preconditioner_presets().size(), labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) EXPECT_EQ(bench::preconditioner_presets()[i].label, labels[i]);
}

// Every label but jacobi gives, through the registry, exactly the spec the benches built before.
TEST(PreconditionerPresets, EveryLabelResolvesToTheSpecTheBenchesBuilt)
{
  for (const std::string& label : bench::preconditioner_preset_labels()) {
    SCOPED_TRACE(label);
    const bench::BenchPreconditioner p = preconditioner_preset(label);
    EXPECT_EQ(p.label, label);
    if (label == "jacobi") {
      // The deck's own point Jacobi, which builds the block-Jacobi bench model built (below).
      EXPECT_TRUE(p.spec == (PreconditionerSpec{"jacobi", JacobiOptions{}}));
      continue;
    }
    EXPECT_TRUE(p.spec == old_specs().at(label));
  }
}

// "jacobi" is the deck's type = "jacobi" (block-Jacobi on 1x1 blocks, automatic), which bench model spelled
// block_jacobi with max_block_size = 1; bench solver forced Gauss-Jordan for jacobi and block_jacobi, which
// the automatic factorisation picks for blocks of up to 32 rows (bench solver's --bs range). Same name
// after the setup, same z to the last bit.
TEST(PreconditionerPresets, JacobiAndBlockJacobiBuildWhatBothBenchesBuilt)
{
  const ExecPtr cpu = Executor::create_cpu();
  for (int bs : {1, 3, 4, 32}) {
    SCOPED_TRACE(bs);
    const BsrPattern pattern = test::random_pattern(40, 40, 3);
    BsrMatrix A(cpu, bs, pattern);
    A.values().copy_from_host(test::random_values(pattern, bs, 4.0 * bs));
    const std::vector<double> r = test::random_vector(A.scalar_rows());
    struct Case {
      std::string label;
      PreconditionerSpec solver_old;  // bench solver's
    };
    const Case cases[] = {
        {"jacobi", {"block_jacobi", BlockJacobiOptions{BlockFactorization::gauss_jordan, 1}}},
        {"block_jacobi", {"block_jacobi", BlockJacobiOptions{BlockFactorization::gauss_jordan, 0}}},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(c.label);
      const Applied now = apply_once(A, preconditioner_preset(c.label).spec, r);
      for (const PreconditionerSpec& old : {old_specs().at(c.label), c.solver_old}) {
        const Applied before = apply_once(A, old, r);
        EXPECT_EQ(now.name, before.name);
        EXPECT_EQ(now.z, before.z);
      }
    }
  }
}

// The resolved text is what a deck would say: reading it again gives the same spec.
TEST(PreconditionerPresets, TheResolvedTextReadsBackToTheSameSpec)
{
  for (const std::string& label : bench::preconditioner_preset_labels()) {
    SCOPED_TRACE(label);
    const bench::BenchPreconditioner p = preconditioner_preset(label);
    EXPECT_TRUE(read_bench_preconditioner("again", p.toml).spec == p.spec) << p.toml;
  }
  EXPECT_EQ(preconditioner_preset("none").toml, R"(type = "none")");
  EXPECT_EQ(preconditioner_preset("block_jacobi").toml,
            R"(type = "block_jacobi", factorization = "automatic", max_block_size = 0, storage = "fp64")");
  EXPECT_EQ(preconditioner_preset("ilu0_isai").toml,
            R"(type = "ilu0", factor_view = "scalar", implementation = "automatic", isai_power = 1, isai_view = "block", sweeps = 0, trisolve = "isai")");
  EXPECT_EQ(preconditioner_preset("bilu0").toml,
            R"(type = "ilu0", factor_sweeps = 0, factor_view = "block", implementation = "automatic", trisolve = "exact")");
  EXPECT_EQ(preconditioner_preset("isai").toml, R"(type = "isai", isai_power = 1, isai_view = "block")");
}

TEST(PreconditionerPresets, AnUnknownLabelIsAnInputErrorListingTheLabels)
{
  EXPECT_THROW(preconditioner_preset("bilu"), InputError);
  EXPECT_EQ(error_of("bilu"),
            "unknown preconditioner preset \"bilu\" (the presets: none, jacobi, block_jacobi, block_jacobi_lu, ilu0, "
            "ilu0_isai, bilu0, bilu0_isai, isai)");
  EXPECT_NE(error_of("deck").find("unknown preconditioner preset \"deck\""), std::string::npos);  // bench model's own
}

// A snippet is validated as the deck is: the message names the snippet's source and the deck key.
TEST(PreconditionerPresets, ABadSnippetIsTheDecksInputError)
{
  try {
    read_bench_preconditioner("isai(4)", bench::isai_snippet(4, IsaiView::block));
    FAIL() << "isai_power 4 accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bench preconditioner \"isai(4)\""), std::string::npos) << what;
    EXPECT_NE(what.find("solver.linear.preconditioner.isai_power: must be in [1, 3]"), std::string::npos) << what;
  }
  EXPECT_THROW(read_bench_preconditioner("x", R"(type = "ilu0", factorization = "lu")"), InputError);
  EXPECT_THROW(read_bench_preconditioner("x", R"(type = "ilu0", )"), InputError);  // not TOML
}

// bench isai's generated variants: what it built by hand for ISAI(k) of the ILU(0) factors and the general
// ISAI(k), in both views.
TEST(PreconditionerPresets, BenchIsaiVariantsAreSnippetsThroughTheSameReader)
{
  for (int k = 1; k <= max_isai_power; ++k)
    for (IsaiView view : {IsaiView::scalar, IsaiView::block}) {
      SCOPED_TRACE(testing::Message() << k << " " << to_string(view));
      Ilu0Options ilu;  // bench isai's kernels and solve sections
      ilu.trisolve = TriangularSolve::isai, ilu.isai_power = k, ilu.view = view;
      EXPECT_TRUE(read_bench_preconditioner("v", bench::ilu0_isai_snippet(k, view)).spec ==
                  (PreconditionerSpec{"ilu0", ilu}));
      EXPECT_TRUE(read_bench_preconditioner("v", bench::isai_snippet(k, view)).spec ==
                  (PreconditionerSpec{"isai", IsaiOptions{k, view}}));
    }
  EXPECT_EQ(bench::ilu0_isai_snippet(2, IsaiView::scalar),
            R"(type = "ilu0", trisolve = "isai", isai_power = 2, isai_view = "scalar")");
  EXPECT_EQ(bench::isai_snippet(3, IsaiView::block), R"(type = "isai", isai_power = 3, isai_view = "block")");
}

// bench model's "deck": the deck's own spec, and its text from the resolved deck reads back to it.
TEST(PreconditionerPresets, DeckIsTheDecksOwnPreconditioner)
{
  for (const char* name : {"quarter_five_spot.toml", "multicomponent_8.toml"}) {
    SCOPED_TRACE(name);
    const RunConfig cfg = load_deck(std::string(BLOCKRES_SOURCE_DIR) + "/inputs/" + name, {});
    const bench::BenchPreconditioner d = bench::deck_preconditioner(cfg);
    EXPECT_EQ(d.label, "deck");
    EXPECT_TRUE(d.spec == cfg.linear.preconditioner);
    ASSERT_FALSE(d.toml.empty());
    EXPECT_EQ(d.toml.rfind("type = \"" + cfg.linear.preconditioner.type + "\"", 0), 0u) << d.toml;
    EXPECT_TRUE(read_bench_preconditioner("deck", d.toml).spec == cfg.linear.preconditioner) << d.toml;
  }
  const RunConfig overridden = load_deck(std::string(BLOCKRES_SOURCE_DIR) + "/inputs/quarter_five_spot.toml",
                                         {"solver.linear.preconditioner.type=\"ilu0\""});
  EXPECT_TRUE(bench::deck_preconditioner(overridden).spec == preconditioner_preset("ilu0").spec);
}

// Symmetric whenever A is: what bench solver's old table said for its labels, now derived from the spec.
TEST(PreconditionerPresets, SymmetryIsAPropertyOfTheSpec)
{
  const std::map<std::string, bool> symmetric = {
      {"none", true},          {"jacobi", true}, {"block_jacobi", true}, {"block_jacobi_lu", true}, {"ilu0", true},
      {"ilu0_isai", false},    {"bilu0", true},  {"bilu0_isai", false},  {"isai", false},
  };
  for (const std::string& label : bench::preconditioner_preset_labels()) {
    SCOPED_TRACE(label);
    EXPECT_EQ(bench::symmetric_preconditioner(preconditioner_preset(label).spec), symmetric.at(label));
  }
  Ilu0Options iterative;  // iterative block ILU(0) factors approximate the exact ones: not claimed
  iterative.factor_view = IluFactorView::block, iterative.factor_sweeps = 2;
  EXPECT_FALSE(bench::symmetric_preconditioner({"ilu0", iterative}));
}
