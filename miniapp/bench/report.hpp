// What every `blockres bench` report shares on both backends: provenance (commit, diff hash and the
// diff beside the report), the atomic file write, and the report's named checks with their PASS/FAIL
// lines and exit code (--strict).
#pragma once

#include "miniapp/io/json.hpp"

#include <functional>
#include <string>
#include <vector>

namespace blockres {

// Writes text + '\n' to path + ".tmp" and renames it to path, so the file appears complete or not
// at all. Throws std::runtime_error when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

// One line for the log: "git <commit>" plus ", diff sha256 <first 12 hex digits>" for a modified tree.
std::string provenance_text();

// The report's provenance fields: "git_commit", "tree_modified", "diff_sha256" and, for a modified
// tree, "diff_file": the diff the binary was built from, written atomically beside the report as
// report_path + ".diff" (or "diff_file": null with "diff_note" when the diff was too large to embed).
void write_provenance(JsonWriter& j, const std::string& report_path);

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
  void write_json(JsonWriter& j, bool strict) const;

 private:
  struct Row {
    Kind kind;
    std::string name, detail;
    bool pass;
  };
  std::vector<Row> rows_;
};

}  // namespace blockres
