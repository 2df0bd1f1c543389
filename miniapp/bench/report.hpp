// What every `blockres bench` report shares on both backends: provenance (commit, diff hash and the
// diff beside the report), the timing object, and the report's named checks with their PASS/FAIL lines
// and exit code (--strict). Reports are nlohmann JSON (miniapp/io/json_file.hpp), written atomically.
#pragma once

#include "miniapp/bench/bench_timing.hpp"
#include "miniapp/io/json_file.hpp"

#include <functional>
#include <string>
#include <vector>

namespace blockres {

// One line for the log: "git <commit>" plus ", diff sha256 <first 12 hex digits>" for a modified tree.
std::string provenance_text();

// The report's provenance fields: "git_commit", "tree_modified", "diff_sha256" and, for a modified
// tree, "diff_file": the diff the binary was built from, written atomically beside the report as
// report_path + ".diff" (or "diff_file": null with "diff_note" when the diff was too large to embed).
void write_provenance(Json& j, const std::string& report_path);

// The head of a GPU section's report, in this order: "benchmark", "blockres_version", the provenance fields
// (write_provenance), "device" and "command_line".
void write_report_head(Json& j, const std::string& benchmark, const std::string& report_path, const std::string& device,
                       const std::string& command_line);

// {"median_ms": ..., "min_ms": ..., "max_ms": ...}: a timing as every report writes it.
Json timing_json(const bench::Timing& t);

// The named checks of a report. A correctness check (a result that disagrees with its reference)
// always fails the exit code; a target (an issue's performance goal) fails it only with --strict.
class ReportChecks {
 public:
  enum class Kind { correctness, target };
  using Log = std::function<void(const std::string&)>;
  // Records the check and logs "PASS|FAIL <kind>: <name>: <detail>"; returns pass.
  bool check(Kind kind, const std::string& name, bool pass, const std::string& detail, const Log& log);
  int failed(Kind kind) const;
  int count() const { return static_cast<int>(rows_.size()); }
  // 1 when a correctness check failed, or when strict and a target failed; else 0.
  int exit_code(bool strict) const;
  // "checks": [{"name", "kind", "pass", "detail"}, ...] and "strict".
  void write_json(Json& j, bool strict) const;

 private:
  struct Row {
    Kind kind;
    std::string name, detail;
    bool pass;
  };
  std::vector<Row> rows_;
};

}  // namespace blockres
