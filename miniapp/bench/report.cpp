// Provenance, atomic writes and PASS/FAIL checks of the bench reports (see report.hpp).
#include "miniapp/bench/report.hpp"

#include "miniapp/io/version.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace blockres {

void write_file_atomically(const std::string& path, const std::string& text)
{
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text << '\n';
    f.close();
    if (!f) throw std::runtime_error(fmt::format("cannot write '{}'", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot rename '{}' to '{}': {}", tmp, path, ec.message()));
}

std::string provenance_text()
{
  const std::string_view sha = git_diff_sha256();
  return sha.empty() ? fmt::format("git {}", git_commit())
                     : fmt::format("git {}, diff sha256 {}", git_commit(), sha.substr(0, 12));
}

void write_provenance(JsonWriter& j, const std::string& report_path)
{
  const std::string_view sha = git_diff_sha256();
  j.value("git_commit", git_commit()).value("tree_modified", !sha.empty()).value("diff_sha256", sha);
  if (sha.empty()) return;
  const std::string_view diff = git_diff();
  if (diff.empty()) {
    j.null("diff_file").value("diff_note", "diff over 8 MB: only its hash was recorded at build time");
    return;
  }
  const std::string path = report_path + ".diff";
  // write_file_atomically appends a newline; the diff already ends with one.
  std::string text(diff);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  write_file_atomically(path, text);
  j.value("diff_file", std::filesystem::path(path).filename().string());
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

void ReportChecks::write_json(JsonWriter& j, bool strict) const
{
  j.value("strict", strict).begin_array("checks");
  for (const auto& r : rows_)
    j.begin_object()
        .value("name", r.name)
        .value("kind", r.kind == Kind::target ? "target" : "correctness")
        .value("pass", r.pass)
        .value("detail", r.detail)
        .end_object();
  j.end_array();
}

}  // namespace blockres
