// The checks of output destinations before the work (see destination.hpp).
#include "miniapp/io/destination.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <system_error>

namespace blockres {

namespace fs = std::filesystem;

namespace {

// The folder a relative name without one lives in.
fs::path folder_of(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

std::string folder_problem(const fs::path& folder, bool make_folder)
{
  std::error_code ec;
  fs::path existing = folder;
  // The nearest existing ancestor decides: it must be a directory we may write into.
  while (!fs::exists(existing, ec)) {
    if (!make_folder) return fmt::format("its folder '{}' does not exist", folder.string());
    if (!existing.has_parent_path() || existing.parent_path() == existing) return {};
    existing = existing.parent_path();
  }
  if (!fs::is_directory(existing, ec)) return fmt::format("'{}' is not a directory", existing.string());
  if (::access(existing.c_str(), W_OK | X_OK) != 0) return fmt::format("the folder '{}' cannot be written", existing.string());
  return {};
}

// <name>_NNNN.vtr: a file of an earlier series of this name.
bool is_series_file(const fs::path& p, const std::string& name)
{
  const std::string f = p.filename().string();
  const std::string prefix = name + "_", suffix = ".vtr";
  if (f.size() <= prefix.size() + suffix.size() || f.compare(0, prefix.size(), prefix) != 0 ||
      f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  for (std::size_t i = prefix.size(); i < f.size() - suffix.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(f[i]))) return false;
  return true;
}

}  // namespace

std::string file_destination_problem(const fs::path& path, bool make_folder)
{
  std::error_code ec;
  if (path.empty()) return "is empty";
  if (fs::is_directory(path, ec)) return "is a directory; give a file name";
  return folder_problem(folder_of(path), make_folder);
}

void check_file_destination(const fs::path& path, std::string_view what, bool make_folder)
{
  if (const std::string why = file_destination_problem(path, make_folder); !why.empty())
    throw DestinationError(fmt::format("{} {}: {}", what, path.string(), why));
}

void check_run_destinations(const RunConfig& cfg, bool restart, const fs::path& jacobian)
{
  const fs::path dir = cfg.output.directory;
  const std::string& name = cfg.output.name;
  // The run's own files: a directory in the way is named with the key that chose the name.
  auto own = [&](const std::string& file) {
    const fs::path p = dir / file;
    if (const std::string why = file_destination_problem(p, true); !why.empty())
      throw DestinationError(fmt::format("output {}: {} (output.directory = '{}', output.name = '{}')", p.string(),
                                         why, dir.string(), name));
  };
  own(name + ".h5");
  if (cfg.output.checkpoint || restart) own(name + ".checkpoint.h5");
  if (cfg.output.vtk) {
    own(name + ".pvd");
    // The series directory is replaced as a whole at the end of the run: only an earlier series of
    // this name may be in the way, never a file or a folder holding anything else.
    const fs::path series = dir / (name + "_vtk");
    std::error_code ec;
    if (fs::exists(series, ec) || fs::is_symlink(series, ec)) {
      if (fs::is_symlink(series, ec) || !fs::is_directory(series, ec))
        throw DestinationError(fmt::format("output {}: is in the way of the VTK series folder and is not one; remove "
                                           "it or choose another output.name",
                                           series.string()));
      for (const auto& e : fs::directory_iterator(series, ec))
        if (!e.is_regular_file(ec) || !is_series_file(e.path(), name))
          throw DestinationError(fmt::format("output {}: the VTK series folder holds '{}', which no blockres series "
                                             "wrote; it would be replaced at the end of the run: move it away or "
                                             "choose another output.name",
                                             series.string(), e.path().filename().string()));
      if (ec) throw DestinationError(fmt::format("output {}: cannot list it: {}", series.string(), ec.message()));
    }
  }
  // Its folder is made by the caller (run_cli) before the run, as the output directory is.
  if (!jacobian.empty()) check_file_destination(jacobian, "--write-jacobian", true);
}

}  // namespace blockres
