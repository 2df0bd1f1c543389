// Deck reader of the multicomponent model: SI values of a valid deck, and an InputError naming
// file:line and the key for each bad value.
#include "input/section.hpp"
#include "input/test/deck_test_util.hpp"
#include "physics/units.hpp"
#include "physics/multicomponent/multicomponent_model.hpp"

#include <gtest/gtest.h>

#include <string>

namespace blockres {
namespace {

namespace u = units;
using test_deck::edit;
using test_deck::expect_error_message;
using test_deck::line_of;

const std::string kDeck = R"([components]
names = ["A", "B", "C"]
density = [1000.0, 900.0, 1100.0]
compressibility = 4e-5
viscosity = [1.0, 0.5, 2.0]
reference_pressure = 100.0
diffusion = 1e-4
reactions = [[-0.1, 0.0, 0.0],
             [0.1, -0.05, 0.0],
             [0.0, 0.05, 0.0]]

[initial]
pressure = 200.0
datum_depth = 1000.0
composition = [0.0, 1.0, 0.0]

[[wells]]
name = "INJ"
type = "injector"
i = 1
j = 1
control = "rate"
rate = 1000.0
bhp = 400.0
composition = [1.0, 0.0, 0.0]

[[wells]]
name = "PROD"
type = "producer"
i = 4
j = 3
control = "bhp"
bhp = 150.0
)";

struct GridRock {
  physics::GridSpec grid;
  physics::RockSpec rock;
  GridRock()
  {
    grid.nx = 4, grid.ny = 3, grid.nz = 2;
    grid.dx.assign(4, 10.0), grid.dy.assign(3, 10.0), grid.dz.assign(2, 2.0);
    rock.porosity.assign(24, 0.2);
    rock.kx.assign(24, 1e-13), rock.ky = rock.kx, rock.kz = rock.kx;
  }
};

std::shared_ptr<const physics::MulticomponentInput> read(const std::string& text)
{
  const GridRock gr;
  toml::table root = toml::parse(std::string_view(text), std::string_view("case.toml"));
  const deck::Deck d{"case.toml", {}};
  deck::Section top(d, root, "");
  auto in = physics::multicomponent::read_deck(top, gr.grid, gr.rock);
  return std::dynamic_pointer_cast<const physics::MulticomponentInput>(in);
}

std::string error_of(const std::string& text)
{
  return test_deck::input_error_of(text, [&] { read(text); });
}

// Replacing `from` by `to` gives an error naming `key` on the line holding `at` (default: `to`).
void expect_edit_error(const std::string& from, const std::string& to, const std::string& key,
                       const std::string& at = {})
{
  const std::string text = edit(kDeck, from, to);
  SCOPED_TRACE("edit: " + from + " -> " + to);
  expect_error_message(error_of(text), "case.toml", line_of(text, at.empty() ? to : at), key);
}

TEST(MulticomponentDeck, ValidDeckInSiUnits)
{
  const auto in = read(kDeck);
  ASSERT_TRUE(in);
  const auto& c = in->components;
  EXPECT_EQ(c.names, (std::vector<std::string>{"A", "B", "C"}));
  EXPECT_EQ(c.density, (std::vector<double>{1000.0, 900.0, 1100.0}));
  for (const double v : c.compressibility) EXPECT_DOUBLE_EQ(v, 4e-5 / u::bar);
  EXPECT_DOUBLE_EQ(c.viscosity[1], 0.5e-3);
  EXPECT_DOUBLE_EQ(c.reference_pressure, 100 * u::bar);
  EXPECT_DOUBLE_EQ(c.diffusion, 1e-4 / u::day);
  EXPECT_DOUBLE_EQ(c.reactions[1 * 3 + 0], 0.1 / u::day);
  EXPECT_DOUBLE_EQ(c.reactions[2 * 3 + 1], 0.05 / u::day);
  EXPECT_TRUE(in->initial.hydrostatic);
  EXPECT_DOUBLE_EQ(in->initial.pressure, 200 * u::bar);
  ASSERT_EQ(in->initial.composition.size(), 1u);
  ASSERT_EQ(in->wells.size(), 2u);
  EXPECT_EQ(in->wells[0].control, physics::WellControlMode::rate);
  EXPECT_DOUBLE_EQ(in->wells[0].rate, 1000.0 / u::day);
  EXPECT_DOUBLE_EQ(in->wells[0].bhp, 400 * u::bar);
  EXPECT_EQ(in->wells[0].composition, (std::vector<double>{1.0, 0.0, 0.0}));
  EXPECT_TRUE(in->wells[1].composition.empty());

  // Composition per layer; one component; defaults.
  const auto per_layer = read(edit(kDeck, "composition = [0.0, 1.0, 0.0]", "composition = [[0.0, 1.0, 0.0], [0.5, 0.5, 0.0]]"));
  ASSERT_EQ(per_layer->initial.composition.size(), 2u);
  EXPECT_EQ(per_layer->initial.composition[1][0], 0.5);
  const std::string one = R"([components]
names = ["W"]
density = 1000.0
viscosity = 1.0
[initial]
pressure = 100.0
composition = [1.0]
)";
  const auto in1 = read(one);
  EXPECT_EQ(in1->components.nc(), 1);
  EXPECT_EQ(in1->components.reactions, std::vector<double>{0.0});
  EXPECT_EQ(in1->components.diffusion, 0.0);
  EXPECT_FALSE(in1->initial.hydrostatic);
}

TEST(MulticomponentDeck, BadComponents)
{
  expect_edit_error("names = [\"A\", \"B\", \"C\"]", "names = []", "components.names");
  std::string many = "names = [";
  for (int k = 0; k < 65; ++k) many += (k ? ", \"C" : "\"C") + std::to_string(k) + "\"";
  many += "]";
  expect_edit_error("names = [\"A\", \"B\", \"C\"]", many, "components.names");
  expect_edit_error("names = [\"A\", \"B\", \"C\"]", "names = [\"1A\", \"B\", \"C\"]", "components.names[0]");
  expect_edit_error("names = [\"A\", \"B\", \"C\"]", "names = [\"A\", \"B-1\", \"C\"]", "components.names[1]");
  expect_edit_error("names = [\"A\", \"B\", \"C\"]", "names = [\"A\", \"A\", \"C\"]", "components.names[1]");
  expect_edit_error("names = [\"A\", \"B\", \"C\"]", "names = [\"A\", 2, \"C\"]", "components.names[1]");
  expect_edit_error("density = [1000.0, 900.0, 1100.0]", "density = [1000.0, 900.0]", "components.density");
  expect_edit_error("density = [1000.0, 900.0, 1100.0]", "density = [1000.0, -900.0, 1100.0]", "components.density[1]");
  expect_edit_error("viscosity = [1.0, 0.5, 2.0]", "viscosity = 0.0", "components.viscosity");
  expect_edit_error("compressibility = 4e-5", "compressibility = -4e-5", "components.compressibility");
  expect_edit_error("diffusion = 1e-4", "diffusion = -1e-4", "components.diffusion");
  expect_edit_error("diffusion = 1e-4", "difusion = 1e-4", "components.difusion");
  const std::string no_density = edit(kDeck, "density = [1000.0, 900.0, 1100.0]\n", "");
  const std::string msg = error_of(no_density);
  EXPECT_NE(msg.find("components.density"), std::string::npos) << msg;
}

TEST(MulticomponentDeck, BadReactions)
{
  // Negative off-diagonal rate.
  expect_edit_error("[0.1, -0.05, 0.0]", "[-0.1, -0.05, 0.0]", "components.reactions[1][0]");
  // A column that does not sum to zero: blamed on its diagonal entry.
  expect_edit_error("[[-0.1, 0.0, 0.0]", "[[-0.2, 0.0, 0.0]", "components.reactions[0][0]");
  expect_edit_error("[0.0, 0.05, 0.0]]", "[0.0, 0.05, 0.01]]", "components.reactions[2][2]");
  // Wrong shapes.
  expect_edit_error("reactions = [[-0.1, 0.0, 0.0],", "reactions = [[-0.1, 0.0],", "components.reactions[0]");
  expect_edit_error("reactions = [[-0.1, 0.0, 0.0],\n             [0.1, -0.05, 0.0],\n",
                    "reactions = [[-0.1, 0.0, 0.0],\n", "components.reactions");
  expect_edit_error("reactions = [[-0.1, 0.0, 0.0],", "reactions = [-0.1,", "components.reactions[0]");
  // Round-off of decimal input is tolerated (relative to max |K|).
  const std::string kmat = "reactions = [[-0.1, 0.0, 0.0],\n             [0.1, -0.05, 0.0],\n             [0.0, 0.05, 0.0]]";
  EXPECT_NO_THROW(read(edit(kDeck, kmat, "reactions = [[-0.3, 0.0, 0.0], [0.1, -0.05, 0.0], [0.2, 0.05, 0.0]]")));
}

TEST(MulticomponentDeck, BadCompositions)
{
  expect_edit_error("composition = [0.0, 1.0, 0.0]", "composition = [0.0, 0.9, 0.0]", "initial.composition");
  expect_edit_error("composition = [0.0, 1.0, 0.0]", "composition = [0.0, 1.0, 1e-9]", "initial.composition");
  expect_edit_error("composition = [0.0, 1.0, 0.0]", "composition = [0.0, 1.0]", "initial.composition");
  expect_edit_error("composition = [0.0, 1.0, 0.0]", "composition = [1.5, -0.5, 0.0]", "initial.composition[0]");
  expect_edit_error("composition = [0.0, 1.0, 0.0]", "composition = [[0.0, 1.0, 0.0]]", "initial.composition");
  expect_edit_error("composition = [0.0, 1.0, 0.0]", "composition = [[0.0, 1.0, 0.0], [0.5, 0.4, 0.0]]",
                    "initial.composition[1]");
  expect_edit_error("composition = [1.0, 0.0, 0.0]", "composition = [1.0, 0.1, 0.0]", "wells[0].composition (well 'INJ')");
  const std::string no_comp = edit(kDeck, "composition = [1.0, 0.0, 0.0]\n", "");
  {
    const std::string msg = error_of(no_comp);
    EXPECT_EQ(msg.rfind("case.toml:" + std::to_string(line_of(no_comp, "[[wells]]")) + ":", 0), 0u) << msg;
    EXPECT_NE(msg.find(": wells[0].composition (well 'INJ'): "), std::string::npos) << msg;
  }
  expect_edit_error("bhp = 150.0\n", "bhp = 150.0\ncomposition = [0.5, 0.5, 0.0]\n", "wells[1].composition (well 'PROD')",
                    "composition = [0.5, 0.5, 0.0]");
}

TEST(MulticomponentDeck, BadWellControls)
{
  expect_edit_error("control = \"rate\"", "control = \"mass\"", "wells[0].control (well 'INJ')");
  expect_edit_error("rate = 1000.0", "rate = -1000.0", "wells[0].rate (well 'INJ')");
  expect_edit_error("bhp = 400.0", "bhp = 0.0", "wells[0].bhp (well 'INJ')");
  expect_edit_error("control = \"bhp\"", "control = \"bhp\"\nrate_target = \"oil\"", "wells[1].rate_target (well 'PROD')",
                    "rate_target");
}

// Issue 28 item 11: components.reference_pressure left at its default is noted for the run log
// when a component is compressible; given, or with incompressible components, it is not.
TEST(MulticomponentDeck, DefaultReferencePressureNoted)
{
  EXPECT_TRUE(read(kDeck)->notes.empty());
  const auto in = read(edit(kDeck, "reference_pressure = 100.0\n", ""));
  ASSERT_EQ(in->notes.size(), 1u);
  EXPECT_NE(in->notes[0].find("components.reference_pressure not given: the default 1.01325 bar (1 atm)"),
            std::string::npos)
      << in->notes[0];
  EXPECT_DOUBLE_EQ(in->components.reference_pressure, 1.01325e5);
  EXPECT_TRUE(read(edit(edit(kDeck, "reference_pressure = 100.0\n", ""), "compressibility = 4e-5", "compressibility = 0"))
                  ->notes.empty());
}

// Issue 28 item 9: a rate on a BHP-controlled well does not apply and is refused at its line (it
// used to be ignored silently); bhp on a rate well is its limit and applies.
TEST(MulticomponentDeck, RateOnBhpWellRefused)
{
  expect_edit_error("control = \"bhp\"", "control = \"bhp\"\nrate = 5000.0", "wells[1].rate (well 'PROD')",
                    "rate = 5000.0");
  const std::string msg = error_of(edit(kDeck, "control = \"bhp\"", "control = \"bhp\"\nrate = 5000.0"));
  EXPECT_NE(msg.find("does not apply to a well under control = \"bhp\""), std::string::npos) << msg;
}

}  // namespace
}  // namespace blockres
