// `blockres verify`: a result file compared field by field with a stored HDF5 baseline, and the
// verification case files (deck + overrides + baseline + tolerance policy) of verification/cases.
#pragma once

#include "miniapp/io/results.hpp"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace blockres {

// The comparison could not be made: a missing, truncated or foreign file, results of different
// grids, report steps, wells or models, a bad case file or tolerance. Exit code 2.
struct VerifyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An entry passes when |result - baseline| <= abs + rel * |baseline| (NaN only where both are NaN).
struct FieldTolerance {
  double rel = 0.0;
  double abs = 0.0;
};

// A compared quantity, in the units of the result file (verification/hdf5_layout.md). The fields
// are those the files carry (a model's cell fields, well rates and quantities in place), so
// `verify` knows no model.
struct VerifiedField {
  std::string name;   // "pressure", "x_CO2", "well_bhp", "well_water_rate", "step_dt", "water_in_place", ...
  std::string unit;
  std::string what;   // one line
  std::string group;  // tolerance group ("mass_fraction", "well_mass_rate", ...); the name when it has none
};
// In comparison order: every cell field, well_bhp, well_<rate> for every well rate, step_time,
// step_dt, every quantity in place.
std::vector<VerifiedField> verified_fields(const Results& results);

// Field or group name -> tolerance. A field's tolerance is the entry of its name, else the entry of
// its group (so one entry serves every component of a multicomponent run).
using Tolerances = std::map<std::string, FieldTolerance>;
const FieldTolerance* find_tolerance(const Tolerances& tol, const VerifiedField& field);

// The policy when neither a case file nor --rtol/--atol say otherwise: the same-backend policy of
// verification/README.md (a CPU run against a CPU baseline on another machine), for every model.
Tolerances default_tolerances();

// Applies "FIELD=VALUE" or "VALUE" (every entry) to the rel (or abs) part of `tol`. FIELD is a
// field name or a group name of `fields` (a group sets every field of the group). Throws
// VerifyError for a bad value or a name `fields` does not know (the message lists those it knows).
void apply_tolerance_option(Tolerances& tol, const std::string& option, bool relative,
                            std::span<const VerifiedField> fields);

// One comparison: a field at one report step (cells), of one well (over the time steps), or a
// per-step series (over the time steps).
struct Comparison {
  std::string field;
  std::string unit;            // the field's unit in the files
  std::string scope;           // "report 3 (t = 540 d)", "well INJ", "steps"
  int report = -1;             // report index for cell fields, else -1
  std::string well;            // well name for well fields
  std::size_t compared = 0;    // entries compared (NaN in both: skipped)
  std::size_t failed = 0;      // entries outside the tolerance
  double max_abs = 0.0;        // max |result - baseline|
  double max_rel = 0.0;        // max |result - baseline| / |baseline| (entries with baseline != 0)
  std::string max_abs_at, max_rel_at;  // "cell (i, j, k)" (1-based) or "step s (t = .. d)"
  double worst = 0.0;          // max |diff| / (abs + rel |baseline|): > 1 fails
  std::string worst_at;
  double worst_result = 0.0, worst_baseline = 0.0;
  FieldTolerance tolerance;
  bool pass() const { return failed == 0; }
};

struct VerifyReport {
  std::vector<Comparison> comparisons;
  std::vector<std::string> mismatches;  // whole-run differences that fail, e.g. a different time-step count
  std::vector<std::string> notes;       // informational: different backends, decks, iteration counts
  bool pass() const;
  std::size_t failed_comparisons() const;
};

// Throws VerifyError when the two results cannot be compared (grid, active cells, report times,
// wells, model, the fields the files carry or their units) or when a field has no tolerance.
VerifyReport compare_results(const Results& result, const Results& baseline, const Tolerances& tol);

// A verification case (TOML, verification/cases/*.toml):
//   description = "..."
//   deck = "../../inputs/quarter_five_spot.toml"   # relative to the case file
//   overrides = ["schedule.end_time=360", ...]     # --set style, optional
//   baseline = "../baselines/name.h5"              # relative to the case file
//   [tolerance.same_backend]                        # result from the baseline's backend (CPU)
//   pressure = { rel = 1e-9, abs = 1e-7 }           # every verified field, by its name
//   mass_fraction = { rel = 1e-8, abs = 1e-9 }      # ... or by its group
//   [tolerance.cross_backend]                       # result from another backend (CUDA vs CPU)
//   ...
struct CaseFile {
  std::filesystem::path path;
  std::string description;
  std::filesystem::path deck, baseline;  // resolved against the case file's directory
  std::vector<std::string> overrides;
  Tolerances same_backend, cross_backend;
  // "file:line:column" of each tolerance table ("same_backend") and entry ("same_backend.pressure"),
  // for check_case_tolerances' messages.
  std::map<std::string, std::string> where;
};
// Throws VerifyError naming file, line and key. The tolerance names are checked against the
// baseline's fields by check_case_tolerances, once the baseline is read.
CaseFile load_case(const std::filesystem::path& path);
// Every tolerance entry names a field or group of `fields`, and every field has a tolerance (by its
// name or its group) in both tables; else VerifyError naming the case file, line and key.
void check_case_tolerances(const CaseFile& c, std::span<const VerifiedField> fields);

struct VerifyOptions {
  std::string input;       // RESULT.h5 or DECK.toml; empty: the case's deck
  std::string baseline;    // empty: the case's baseline
  std::string case_file;   // optional
  std::string partition;   // several ranks: --partition PxxPyxPz of the deck run (issue 33)
  std::string backend = "auto";
  std::vector<std::string> overrides;  // --set, added to the case's overrides (deck input only)
  std::vector<std::string> rtol, atol;  // [FIELD=]VALUE
  std::string output_dir;  // where a deck run writes its result (default: a temporary directory, removed)
  std::string json_path;   // optional machine-readable report
  bool regenerate = false; // run the case on the CPU and replace its baseline
  std::string command_line;
};

// The whole command: 0 when every comparison passes, 1 when any fails, 2 on an error (its message
// logged through `error`). Never throws.
int run_verify(const VerifyOptions& options, const std::function<void(const std::string&)>& log,
               const std::function<void(const std::string&)>& error);

}  // namespace blockres
