// `blockres bench --compare A.json B.json [...]`: suite reports side by side, each figure as a value and as a
// ratio to the first report's (above 1: that machine is faster), and the suite scores.
#include "miniapp/bench/suite.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace blockres::suite {

namespace {

Json load_report(const std::string& path)
{
  Json j;
  try {
    j = read_json_file(path);
  } catch (const std::exception& e) {
    throw CompareError(e.what());
  }
  if (!j.is_object() || j.value("schema", std::string()) != schema_name)
    throw CompareError(fmt::format("{}: not a blockres bench suite report (no \"schema\": \"{}\")", path, schema_name));
  for (const char* key : {"suite_version", "parameters", "ceilings", "kernels", "applications", "score", "validity"})
    if (!j.contains(key))
      throw CompareError(fmt::format("{}: a bench suite report without \"{}\" (truncated or edited?)", path, key));
  if (!j["suite_version"].is_number_integer())
    throw CompareError(fmt::format("{}: \"suite_version\" is not an integer", path));
  return j;
}

std::string machine(const Json& j)
{
  const Json& hw = j.value("hardware", Json::object());
  if (hw.contains("gpu") && hw["gpu"].is_object()) return hw["gpu"].value("name", std::string("GPU"));
  if (hw.contains("cpu") && hw["cpu"].is_object())
    return fmt::format("{} ({} CPUs)", hw["cpu"].value("model", std::string("CPU")), j["parameters"].value("threads", 0));
  return "unknown machine";
}

double num(const Json& j, const char* key)
{
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

// One table: rows keyed by name, a value per report, and the ratio to the first report (higher_is_better:
// value / first; else first / value).
// `work` (optional, the kernel rows' bytes): a row whose work differs from the first report's by more than
// 0.1% (another problem size, or bytes counted another way by another version of the same suite) gets no
// ratio, "(*)" instead, and a note under the table: a ratio of GB/s over different work misleads.
void table(const std::string& title, const std::vector<std::map<std::string, double>>& cols,
           const std::vector<std::string>& order, bool higher_is_better, const std::string& unit, const Log& log,
           const std::vector<std::map<std::string, double>>* work = nullptr)
{
  log("");
  log(fmt::format("{} ({}{})", title, unit, cols.size() > 1 ? "; ratio to the first report, above 1 = faster" : ""));
  bool starred = false;
  for (const std::string& key : order) {
    std::string line = fmt::format("  {:<34}", key);
    const auto first = cols[0].find(key);
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const auto it = cols[k].find(key);
      if (it == cols[k].end() || !std::isfinite(it->second)) {
        line += fmt::format(" {:>12} {:>7}", "--", "");
        continue;
      }
      line += fmt::format(" {:>12.4g}", it->second);
      bool same_work = true;
      if (work && k > 0) {
        const auto w0 = (*work)[0].find(key), wk = (*work)[k].find(key);
        same_work = w0 != (*work)[0].end() && wk != (*work)[k].end() &&
                    std::abs(wk->second - w0->second) <= 1e-3 * std::abs(w0->second);
      }
      if (k > 0 && !same_work) {
        line += fmt::format(" {:>7}", "(*)");
        starred = true;
      } else if (k > 0 && first != cols[0].end() && std::isfinite(first->second) && first->second > 0 && it->second > 0) {
        line += fmt::format(" {:>6.2f}x", higher_is_better ? it->second / first->second : first->second / it->second);
      } else {
        line += fmt::format(" {:>7}", "");
      }
    }
    log(line);
  }
  if (starred)
    log("  (*) not compared: the row's bytes differ from the first report's (another problem size, or counted "
        "another way)");
}

}  // namespace

int compare_reports(const std::vector<std::string>& paths, const Log& log)
{
  if (paths.size() < 2) throw CompareError("--compare needs at least two reports");
  std::vector<Json> reps;
  for (const auto& p : paths) reps.push_back(load_report(p));
  const int version = reps[0]["suite_version"].get<int>();
  for (std::size_t k = 1; k < reps.size(); ++k)
    if (reps[k]["suite_version"].get<int>() != version)
      throw CompareError(fmt::format("{} is a suite version {} report and {} one of version {}: reports of different "
                                     "suite versions measure different things and are not compared",
                                     paths[0], version, paths[k], reps[k]["suite_version"].get<int>()));
  log(fmt::format("bench suite version {}: {} reports", version, reps.size()));
  for (std::size_t k = 0; k < reps.size(); ++k)
    log(fmt::format("  [{}] {}: {}, size {}, backend {}, {}", k + 1, paths[k], machine(reps[k]),
                    reps[k]["parameters"].value("size", std::string("?")),
                    reps[k]["parameters"].value("backend", std::string("?")),
                    reps[k]["validity"].value("verdict", std::string("?"))));
  for (std::size_t k = 1; k < reps.size(); ++k)
    if (reps[k]["parameters"].value("size", std::string()) != reps[0]["parameters"].value("size", std::string()))
      log(fmt::format("note: [{}] ran size {} and [1] size {}: the figures of merit compare, the kernel rows of "
                      "different problem sizes less well",
                      k + 1, reps[k]["parameters"].value("size", std::string()),
                      reps[0]["parameters"].value("size", std::string())));
  for (std::size_t k = 0; k < reps.size(); ++k)
    if (reps[k]["validity"].value("verdict", std::string()) != "VALID")
      log(fmt::format("note: [{}] is not a VALID report", k + 1));

  const std::size_t n = reps.size();
  std::vector<std::map<std::string, double>> ceil(n), kern(n), kern_bytes(n), kry(n), app(n), score(n);
  std::vector<std::string> ceil_order = {"copy GB/s", "read GB/s", "FP64 GFLOP/s"}, kern_order, kry_order, app_order;
  auto remember = [](std::vector<std::string>& order, const std::string& key) {
    if (std::find(order.begin(), order.end(), key) == order.end()) order.push_back(key);
  };
  for (std::size_t k = 0; k < n; ++k) {
    const Json& j = reps[k];
    ceil[k]["copy GB/s"] = num(j["ceilings"], "copy_gbs");
    ceil[k]["read GB/s"] = num(j["ceilings"], "read_gbs");
    ceil[k]["FP64 GFLOP/s"] = num(j["ceilings"], "fp64_gflops");
    for (const Json& r : j["kernels"]) {
      const std::string key = fmt::format("{} bs {}", r.value("kernel", std::string("?")), r.value("block_size", 0));
      kern[k][key] = num(r, "gbs");
      kern_bytes[k][key] = num(r, "bytes");
      remember(kern_order, key);
    }
    if (j.contains("krylov"))
      for (const Json& r : j["krylov"]) {
        const std::string key = fmt::format("{} bs {}", r.value("method", std::string("?")), r.value("block_size", 0));
        kry[k][key] = num(r, "us_per_iteration");
        remember(kry_order, key);
      }
    for (const Json& r : j["applications"]) {
      const std::string key = r.value("case", std::string("?"));
      app[k][key] = r.contains("figure_of_merit") ? num(r["figure_of_merit"], "value") : NAN;
      remember(app_order, key);
    }
    score[k]["suite score"] = num(j["score"], "value");
  }
  table("ceilings", ceil, ceil_order, true, "GB/s, GFLOP/s", log);
  table("kernels", kern, kern_order, true, "GB/s moved", log, &kern_bytes);
  table("Krylov iteration", kry, kry_order, false, "us per iteration", log);
  table("applications", app, app_order, true, "cell-Newton-iterations/s", log);
  table("suite score", score, {"suite score"}, true, "geometric mean of the applications", log);
  return 0;
}

}  // namespace blockres::suite
