// Where an atomic writer may put its file: the checks every output destination passes before the work that fills it.
#pragma once

#include "miniapp/io/config.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace blockres {

// An output destination that cannot take its file (a directory in the way, a folder that is a file or
// cannot be written). Thrown before the work, so nothing (no temporary) is left; exit code 1 (verify: 2).
struct DestinationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Why an atomic writer (path.tmp written, then renamed to path) cannot put a file at `path`: `path`
// is a directory, or its folder is not a directory, cannot be created or cannot be written. With
// make_folder, a missing folder is fine when its nearest existing ancestor is a writable directory
// (the writer creates it); without, the folder must exist. Empty: it can.
std::string file_destination_problem(const std::filesystem::path& path, bool make_folder);

// The same for a file destination named by `what` (an option or key): DestinationError "what PATH: why".
void check_file_destination(const std::filesystem::path& path, std::string_view what, bool make_folder);

// Every destination of `blockres run` for `cfg` (into cfg.output.directory): <name>.h5, with
// checkpoints (or a restart, which writes one) <name>.checkpoint.h5, with VTK <name>.pvd and
// <name>_vtk/ (which may exist only as a folder of an earlier series: <name>_NNNN.vtr files, replaced
// at the end of the run), and a --write-jacobian file when `jacobian` is not empty. Throws
// DestinationError naming the first that cannot take its file. Missing folders are fine where they
// can be made (the run makes the output directory; run_cli makes the Jacobian file's folder).
void check_run_destinations(const RunConfig& cfg, bool restart, const std::filesystem::path& jacobian);

}  // namespace blockres
