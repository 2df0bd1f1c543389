// The oil_water model's deck tables ([fluid], [initial], [[wells]]) and its registry entry.
#include "physics/well_deck.hpp"
#include "physics/model_registry.hpp"
#include "physics/oil_water/oil_water_model.hpp"
#include "physics/units.hpp"

namespace blockres::physics {

namespace {

using namespace deck;

PhaseSpec read_phase(Section p, std::vector<std::string>& notes)
{
  p.only({"surface_density", "viscosity", "fvf", "compressibility", "reference_pressure"});
  PhaseSpec s;
  s.surface_density = p.number("surface_density", above(0));
  s.viscosity = p.number("viscosity", above(0)) * units::centipoise;
  s.fvf_ref = p.number("fvf", 1.0, above(0));
  s.compressibility = p.number("compressibility", 0.0, at_least(0)) * units::per_bar;
  if (s.compressibility > 0.0 && !p.given("reference_pressure"))
    notes.push_back(physics::default_reference_pressure_note(p.key("reference_pressure"), "its FVF"));
  s.reference_pressure = p.number("reference_pressure", 1.01325, any) * units::bar;
  return s;
}

RelpermSpec read_relperm(Section r)
{
  static constexpr std::string_view corey[] = {"swc", "sor", "nw", "no", "krw_max", "kro_max"};
  r.only({"type", "swc", "sor", "nw", "no", "krw_max", "kro_max", "table"});
  RelpermSpec s;
  if (r.choice("type", "corey", {"corey", "table"}) == "corey") {
    if (const toml::node* n = r.find("table")) r.bad(*n, "table", "is only allowed with type = \"table\"");
    s.swc = r.number("swc", 0.0, between(0, 1, false, true));
    s.sor = r.number("sor", 0.0, between(0, 1, false, true));
    if (s.swc + s.sor >= 1.0) {
      const std::string_view k = r.given("sor") ? "sor" : "swc";
      r.bad(r.require(k), k, fmt::format("swc + sor must be < 1 (swc = {}, sor = {})", s.swc, s.sor));
    }
    s.nw = r.number("nw", 2.0, at_least(1));
    s.no = r.number("no", 2.0, at_least(1));
    s.krw_max = r.number("krw_max", 1.0, between(0, 1, true, false));
    s.kro_max = r.number("kro_max", 1.0, between(0, 1, true, false));
    return s;
  }
  s.kind = RelpermSpec::Kind::table;
  for (const std::string_view k : corey)
    if (const toml::node* n = r.find(k)) r.bad(*n, k, "is a Corey parameter, not allowed with type = \"table\"");
  const toml::node& t = r.require("table", "missing required key (for type = \"table\")");
  const toml::array* rows = t.as_array();
  if (!rows) r.bad(t, "table", "must be an array of [S_w, k_rw, k_ro, P_cow] rows");
  if (rows->size() < 2) r.bad(t, "table", "must have at least 2 rows");
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const toml::node& row = (*rows)[i];
    const std::string k = fmt::format("table[{}]", i);
    if (!row.is_array() || row.as_array()->size() != 4)
      r.bad(row, k, "must be a row of 4 numbers [S_w, k_rw, k_ro, P_cow]");
    const toml::array& a = *row.as_array();
    const double sw = r.number(a[0], k, unit_interval, "S_w");
    if (i > 0 && sw <= s.table[s.table.size() - 4])
      r.bad(a[0], k, fmt::format("S_w must be strictly increasing (previous row has {})", s.table[s.table.size() - 4]));
    const double krw = r.number(a[1], k, unit_interval, "k_rw"), kro = r.number(a[2], k, unit_interval, "k_ro");
    s.table.insert(s.table.end(), {sw, krw, kro, r.number(a[3], k, any, "P_cow") * units::bar});
  }
  return s;
}

FluidSpec read_fluid(Section f, std::vector<std::string>& notes)
{
  f.only({"water", "oil", "relperm"});
  FluidSpec s;
  s.water = read_phase(f.sub("water", true), notes);
  s.oil = read_phase(f.sub("oil", true), notes);
  s.relperm = read_relperm(f.sub("relperm", false));
  return s;
}

InitialSpec read_initial(Section i)
{
  i.only({"pressure", "datum_depth", "sw"});
  InitialSpec s;
  s.pressure = i.number("pressure", above(0)) * units::bar;
  if (const auto d = i.opt_number("datum_depth")) s.hydrostatic = true, s.datum_depth = *d;
  s.sw = i.number("sw", unit_interval);
  return s;
}

// The oil_water controls of a well (the shared keys are read by deck::read_wells).
void read_well_controls(Section& w, WellSpec& s)
{
  const bool injector = s.kind == WellKind::injector;
  const bool rate = w.choice("control", {"rate", "bhp"}) == "rate";
  s.control = rate ? WellControlMode::rate : WellControlMode::bhp;
  if (rate) w.require("rate", "missing required key (for control = \"rate\")");
  // A rate on a BHP-controlled well would be silently ignored: it does not apply, so it is refused.
  // (bhp on a rate well applies: it is the well's BHP limit.)
  if (const toml::node* n = w.find("rate"); n && !rate)
    w.bad(*n, "rate", "does not apply to a well under control = \"bhp\" (set control = \"rate\" to control the rate)");
  s.rate = w.opt_number("rate", above(0)).value_or(0.0) * units::m3_per_day;
  const std::string target = w.choice("rate_target", injector ? "water" : "liquid", {"water", "oil", "liquid"});
  if (injector && target != "water")
    w.bad(w.require("rate_target"), "rate_target", "must be \"water\" for an injector (it injects water)");
  s.target = target == "water" ? RateTarget::water : target == "oil" ? RateTarget::oil : RateTarget::liquid;
  s.bhp = w.number("bhp", above(0)) * units::bar;
}

constexpr std::string_view well_control_keys[] = {"control", "rate", "rate_target", "bhp"};
constexpr std::string_view sections[] = {"fluid", "initial", "wells"};

std::shared_ptr<const ModelInput> read_deck(Section& top, const GridSpec& grid, const RockSpec& rock)
{
  auto in = std::make_shared<OilWaterInput>();
  in->fluid = read_fluid(top.sub("fluid", true), in->notes);
  in->initial = read_initial(top.sub("initial", true));
  in->wells = read_wells<WellSpec>(top, grid, rock, well_control_keys, read_well_controls);
  return in;
}

std::unique_ptr<Model> create(ExecPtr exec, const Grid& grid, const RockSpec& rock, bool gravity, const ModelInput& input)
{
  const auto& in = dynamic_cast<const OilWaterInput&>(input);
  return std::make_unique<OilWaterModel>(std::move(exec), grid, rock, in.fluid, in.wells, gravity, in.initial);
}

// Two unknowns per cell, p first; the accumulation blocks have a pressure column when the rock or
// either phase is compressible.
LinearSystemTraits linear_system(const ModelInput& input, const RockSpec& rock)
{
  const auto& in = dynamic_cast<const OilWaterInput&>(input);
  const bool compressible =
      rock.compressibility > 0 || in.fluid.water.compressibility > 0 || in.fluid.oil.compressibility > 0;
  return {.block_size = OilWaterModel::bs, .pressure_unknown = true, .compressible = compressible};
}

}  // namespace

ModelEntry oil_water::model_entry() { return {"oil_water", sections, read_deck, create, linear_system}; }

}  // namespace blockres::physics
