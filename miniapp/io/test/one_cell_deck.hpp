// Test support: one-cell decks (nx = ny = nz = 1) made from the shipped ones, the grids whose
// per-cell series a result file must still store as [reports][1] (issue 28), and a run of them.
#pragma once

#include "miniapp/io/deck.hpp"
#include "miniapp/run/simulator.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace blockres::test {

namespace one_cell_detail {

inline std::string read_text(const std::filesystem::path& p)
{
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `text` with `from` replaced by `to`; the shipped deck must contain `from` (else the test is stale).
inline std::string replace(std::string text, const std::string& from, const std::string& to)
{
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("one_cell_deck: the shipped deck has no '" + from + "'");
  return text.replace(at, from.size(), to);
}

// `text` without the lines from `from` up to (not including) `to`.
inline std::string cut(const std::string& text, const std::string& from, const std::string& to)
{
  const auto a = text.find(from), b = text.find(to, a);
  if (a == std::string::npos || b == std::string::npos)
    throw std::runtime_error("one_cell_deck: the shipped deck has no '" + from + "' before '" + to + "'");
  return text.substr(0, a) + text.substr(b);
}

}  // namespace one_cell_detail

enum class OneCell {
  oil_water_one_well,        // quarter_five_spot's producer (BHP control) alone
  oil_water_no_wells,        // quarter_five_spot without wells
  one_component_one_well,    // multicomponent_3 with component A only and its injector
};

// Writes `dir`/one_cell.toml, a one-cell deck of the kind asked for with reports at 10 and 20 days,
// and returns its path.
inline std::filesystem::path write_one_cell_deck(OneCell kind, const std::filesystem::path& dir)
{
  using namespace one_cell_detail;
  const std::filesystem::path inputs = std::filesystem::path(BLOCKRES_SOURCE_DIR) / "inputs";
  std::string t;
  if (kind == OneCell::one_component_one_well) {
    t = read_text(inputs / "multicomponent_3.toml");
    t = replace(t, "nx = 50", "nx = 1");
    t = replace(t, "names = [\"A\", \"B\", \"C\"]", "names = [\"A\"]");
    t = replace(t, "density = [1000.0, 1010.0, 1020.0]", "density = [1000.0]");
    t = replace(t, "viscosity = [0.5, 0.6, 0.8]", "viscosity = [0.5]");
    t = cut(t, "# K[k][l]", "[initial]");
    t = replace(t, "composition = [0.0, 0.0, 1.0]", "composition = [1.0]");
    t = replace(t, "composition = [1.0, 0.0, 0.0]", "composition = [1.0]");
    t = cut(t, "[[wells]]\nname = \"PROD\"", "[schedule]");
    t = replace(t, "end_time = 100.0\nreport_interval = 20.0", "end_time = 20.0\nreport_interval = 10.0");
  } else {
    t = read_text(inputs / "quarter_five_spot.toml");
    t = replace(t, "nx = 30\nny = 30\nnz = 5", "nx = 1\nny = 1\nnz = 1");
    // Log-normal fields need no change: one cell draws one value.
    t = replace(t, "i = 30\nj = 30", "i = 1\nj = 1");
    t = cut(t, "[[wells]]\nname = \"INJ\"", "[[wells]]\nname = \"PROD\"");
    if (kind == OneCell::oil_water_no_wells) t = cut(t, "[[wells]]\nname = \"PROD\"", "[schedule]");
    t = replace(t, "end_time = 1800.0\nreport_interval = 180.0", "end_time = 20.0\nreport_interval = 10.0");
  }
  std::filesystem::create_directories(dir);
  const auto path = dir / "one_cell.toml";
  std::ofstream(path) << t;
  return path;
}

// Runs `deck` (with `overrides`, output.vtk off) on the CPU into `dir`, continuing from report
// `report` (-1: the last) of `restart` when given; returns the result file.
inline std::filesystem::path run_one_cell(const std::filesystem::path& deck, const std::filesystem::path& dir,
                                          std::vector<std::string> overrides = {},
                                          const std::filesystem::path& restart = {}, long report = -1)
{
  overrides.push_back("output.vtk=false");
  const RunConfig cfg = load_deck(deck.string(), overrides);
  RunOptions o(dir, "test");
  o.restart_file = restart;
  o.restart_report = report;
  return run_simulation(cfg, Executor::create_cpu(), o, [](const std::string&) {}).result_file;
}

}  // namespace blockres::test
