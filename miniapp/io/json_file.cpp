// The atomic write and the checked read of JSON files (see json_file.hpp).
#include "miniapp/io/json_file.hpp"

#include "miniapp/io/destination.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace blockres {

void write_file_atomically(const std::string& path, const std::string& text)
{
  namespace fs = std::filesystem;
  const std::string tmp = path + ".tmp";
  // Refused before the temporary exists: a rename onto a directory would fail and leave it behind.
  check_file_destination(path, "cannot write", true);
  std::error_code ec;
  if (const fs::path parent = fs::path(path).parent_path(); !parent.empty()) fs::create_directories(parent, ec);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text << '\n';
    f.close();
    if (!f) {
      fs::remove(tmp, ec);
      throw std::runtime_error(fmt::format("cannot write '{}'", tmp));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot rename '{}' to '{}': {}", tmp, path, ec.message()));
}

void write_json_file(const std::string& path, const Json& j)
{
  write_file_atomically(path, j.dump(2, ' ', false, Json::error_handler_t::replace));
}

Json read_json_file(const std::string& path)
{
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(fmt::format("cannot read '{}'", path));
  try {
    return Json::parse(f);
  } catch (const Json::parse_error& e) {
    throw std::runtime_error(fmt::format("'{}' is not valid JSON: {}", path, e.what()));
  }
}

}  // namespace blockres
