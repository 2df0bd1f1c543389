// A fully resolved run configuration: what the deck loader produces and the simulator consumes.
#pragma once

#include "input/names.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi_options.hpp"
#include "linalg/preconditioners/registry.hpp"
#include "physics/model_registry.hpp"
#include "physics/spec.hpp"

#include <memory>

#include <string>
#include <string_view>
#include <vector>

namespace blockres {

struct ScheduleConfig {
  std::vector<double> report_times;  // [s], strictly increasing, > 0
  double dt_initial = 86400.0;       // [s]
  double dt_max = 30 * 86400.0;
  double dt_min = 1.0;
};

struct NewtonConfig {
  int max_iterations = 12;
  double tol_cnv = 1e-3;
  double tol_mb = 1e-7;
  double max_dsw = 0.2;       // Appleyard chop on |dS_w| per iteration (oil_water)
  double max_dx = 0.2;        // chop on |dx_k| of mass fractions per iteration (multicomponent)
  double max_dp_rel = 0.3;    // chop on |dp| / p per iteration
  double cut_factor = 0.5;    // dt *= cut_factor after a failed step
  double growth_factor = 2.0; // dt *= growth_factor after a successful step
  // > 0: after a successful step with k Newton iterations, dt *= target_iterations / k, within
  // [cut_factor, growth_factor] (an iteration-count time-step controller); 0: always growth_factor.
  int target_iterations = 0;
  // true: a Newton solve is abandoned (and the step cut) as soon as the decrease of its MB norm
  // predicts more than 2 x max_iterations iterations (see predict_newton_iterations); false: every
  // failing attempt runs all max_iterations iterations.
  bool predict_failure = false;
};

// How the relative tolerance of each Newton step's linear solve is chosen (miniapp/run/forcing.hpp).
//   fixed             KrylovConfig::rel_tol for every solve (`tolerance` in the deck);
//   eisenstat_walker  Eisenstat–Walker choice 2 from the decrease of ||R||, within [eta_min, eta_max];
//                     the first Newton iteration of every time step uses eta_initial.
enum class ForcingKind { fixed, eisenstat_walker };
inline constexpr auto forcing_kind_names =
    name_table<ForcingKind>({{ForcingKind::fixed, "fixed"}, {ForcingKind::eisenstat_walker, "eisenstat_walker"}});
constexpr std::string_view to_string(ForcingKind f) { return forcing_kind_names.name(f); }

struct ForcingConfig {
  ForcingKind kind = ForcingKind::fixed;
  double eta_min = 1e-6;
  double eta_max = 0.1;
  double eta_initial = 0.1;
};

// A deck's linear solver. The deck's defaults are not this struct's: they follow the model's system
// (linalg/preconditioners/default_solver.hpp, default_linear_solver); these initialisers serve code
// that builds a configuration without a deck.
struct LinearConfig {
  KrylovConfig krylov;  // rel_tol: the fixed forcing term; replaced per solve by Eisenstat–Walker
  ForcingConfig forcing;
  // A registry name and that preconditioner's options (linalg/preconditioners/registry.hpp).
  PreconditionerSpec preconditioner{"block_jacobi", BlockJacobiOptions{}};
};

struct OutputConfig {
  std::string directory = "output";  // relative paths: relative to the working directory
  std::string name;                  // file stem; default: the deck file's stem
  bool vtk = false;                  // also a .pvd/.vtr time series (miniapp/io/vtk_output.hpp); the deck's
                                     // default is true in builds with VTK (BLOCKRES_VTK), false otherwise
  bool checkpoint = false;           // <name>.checkpoint.h5 after every report (miniapp/run/simulator.hpp)
  bool background_writer = true;     // write reports on a thread of their own (miniapp/io/background_writer.hpp)
};

struct RunConfig {
  std::string deck_path;      // as given
  std::string deck_text;      // the deck file's text, verbatim
  std::string resolved_toml;  // the deck with --set overrides applied and defaults filled in
  std::string model = "oil_water";  // the registry name (physics/model_registry.hpp)
  physics::GridSpec grid;
  physics::RockSpec rock;
  std::shared_ptr<const physics::ModelInput> model_input;  // the model's own tables, read by its entry
  // Lines for the run log: defaults worth a word (rock.reference_pressure left at 1 atm) and the
  // linear solver (the default for the model's system, or the deck's own choice).
  std::vector<std::string> notes;
  ScheduleConfig schedule;
  NewtonConfig newton;
  LinearConfig linear;
  OutputConfig output;
};

}  // namespace blockres
