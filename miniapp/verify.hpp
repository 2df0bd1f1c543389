// `blockres verify`: a result file compared field by field with a stored HDF5 baseline, and the
// verification case files (deck + overrides + baseline + tolerance policy) of verification/cases.
#pragma once

#include "miniapp/results.hpp"

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

// The compared quantities, in the units of the result file (verification/hdf5_layout.md).
struct VerifiedField {
  const char* name;
  const char* unit;
  const char* what;
};
std::span<const VerifiedField> verified_fields();

using Tolerances = std::map<std::string, FieldTolerance>;  // one entry per verified field

// The policy when neither a case file nor --rtol/--atol say otherwise: the same-backend policy of
// verification/README.md (a CPU run against a CPU baseline on another machine).
Tolerances default_tolerances();

// Applies "FIELD=VALUE" or "VALUE" (every field) to the rel (or abs) part of `tol`. Throws VerifyError.
void apply_tolerance_option(Tolerances& tol, const std::string& option, bool relative);

// One comparison: a field at one report step (cells), of one well (over the time steps), or a
// per-step series (over the time steps).
struct Comparison {
  std::string field;
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
// wells, model).
VerifyReport compare_results(const Results& result, const Results& baseline, const Tolerances& tol);

// A verification case (TOML, verification/cases/*.toml):
//   description = "..."
//   deck = "../../inputs/quarter_five_spot.toml"   # relative to the case file
//   overrides = ["schedule.end_time=360", ...]     # --set style, optional
//   baseline = "../baselines/name.h5"              # relative to the case file
//   [tolerance.same_backend]                        # result from the baseline's backend (CPU)
//   pressure = { rel = 1e-9, abs = 1e-7 }           # every verified field
//   [tolerance.cross_backend]                       # result from another backend (CUDA vs CPU)
//   ...
struct CaseFile {
  std::filesystem::path path;
  std::string description;
  std::filesystem::path deck, baseline;  // resolved against the case file's directory
  std::vector<std::string> overrides;
  Tolerances same_backend, cross_backend;
};
CaseFile load_case(const std::filesystem::path& path);  // throws VerifyError naming file, line and key

struct VerifyOptions {
  std::string input;       // RESULT.h5 or DECK.toml; empty: the case's deck
  std::string baseline;    // empty: the case's baseline
  std::string case_file;   // optional
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
