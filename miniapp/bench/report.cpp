// Provenance, timings and PASS/FAIL checks of the bench reports (see report.hpp).
#include "miniapp/bench/report.hpp"

#include "miniapp/io/version.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string_view>

namespace blockres {

std::string provenance_text()
{
  const std::string_view sha = git_diff_sha256();
  return sha.empty() ? fmt::format("git {}", git_commit())
                     : fmt::format("git {}, diff sha256 {}", git_commit(), sha.substr(0, 12));
}

void write_provenance(Json& j, const std::string& report_path)
{
  const std::string_view sha = git_diff_sha256();
  j["git_commit"] = git_commit();
  j["tree_modified"] = !sha.empty();
  j["diff_sha256"] = sha;
  if (sha.empty()) return;
  const std::string_view diff = git_diff();
  if (diff.empty()) {
    j["diff_file"] = nullptr;
    j["diff_note"] = "diff over 8 MB: only its hash was recorded at build time";
    return;
  }
  const std::string path = report_path + ".diff";
  // write_file_atomically appends a newline; the diff already ends with one.
  std::string text(diff);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  write_file_atomically(path, text);
  j["diff_file"] = std::filesystem::path(path).filename().string();
}

void write_report_head(Json& j, const std::string& benchmark, const std::string& report_path, const std::string& device,
                       const std::string& command_line)
{
  j["benchmark"] = benchmark;
  j["blockres_version"] = version_string();
  write_provenance(j, report_path);
  j["device"] = device;
  j["command_line"] = command_line;
}

Json timing_json(const bench::Timing& t)
{
  return {{"median_ms", t.median_ms}, {"min_ms", t.min_ms}, {"max_ms", t.max_ms}};
}

bool ReportChecks::check(Kind kind, const std::string& name, bool pass, const std::string& detail, const Log& log)
{
  rows_.push_back({kind, name, detail, pass});
  if (log)
    log(fmt::format("{} {}: {}{}", pass ? "PASS" : "FAIL", kind == Kind::target ? "target" : "check", name,
                    detail.empty() ? "" : ": " + detail));
  return pass;
}

int ReportChecks::failed(Kind kind) const
{
  int n = 0;
  for (const auto& r : rows_) n += r.kind == kind && !r.pass;
  return n;
}

int ReportChecks::exit_code(bool strict) const
{
  if (failed(Kind::correctness) > 0) return 1;
  return strict && failed(Kind::target) > 0 ? 1 : 0;
}

void ReportChecks::write_json(Json& j, bool strict) const
{
  j["strict"] = strict;
  Json checks = Json::array();
  for (const auto& r : rows_)
    checks.push_back({{"name", r.name},
                      {"kind", r.kind == Kind::target ? "target" : "correctness"},
                      {"pass", r.pass},
                      {"detail", r.detail}});
  j["checks"] = std::move(checks);
}

}  // namespace blockres
