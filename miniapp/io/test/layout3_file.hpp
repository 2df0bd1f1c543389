// Test support: rewrites a result file of layout version 4 in place as the version 3 writer wrote it
// (verification/hdf5_layout.md, "Changes from version 3"), for the tests that a version 3 file still
// reads, restarts and verifies. The stored baselines are version 2 and 3 files without /restart, so a
// restartable version 3 file is made here from a fresh run.
#pragma once

#include "miniapp/io/h5.hpp"
#include "miniapp/io/results.hpp"

#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace blockres::test {

namespace layout3_detail {

// The string attributes the writer puts on datasets.
inline const char* const dataset_attributes[] = {"units", "group", "description", "sign", "codes"};

// The names of the datasets (not groups) directly under `group`.
inline std::vector<std::string> datasets_in(hid_t file, const std::string& group)
{
  std::vector<std::string> out;
  h5::Id g = h5::open_group(file, group);
  H5G_info_t info{};
  if (H5Gget_info(g, &info) < 0) throw h5::Error("H5Gget_info " + group);
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    char name[256] = {0};
    if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT) < 0)
      throw h5::Error("H5Lget_name_by_idx " + group);
    h5::Id obj(H5Oopen(g, name, H5P_DEFAULT));  // H5Oget_info's signature differs between HDF5 1.10 and 1.12
    if (H5Iget_type(obj) == H5I_DATASET) out.emplace_back(name);
  }
  return out;
}

// Replaces the numeric dataset `path` by an extendable float64 series of its values: 1-D when it
// is 1-D or [rows][1] (version 3 collapsed one-value rows), else [rows][width]; its string
// attributes come along. `no_value` (if not NaN) becomes NaN (version 3's padding of /wells/at_bhp).
inline void rewrite_as_float64(hid_t file, const std::string& path, double no_value = NAN)
{
  const auto d = h5::read_doubles(file, path);
  std::vector<std::pair<std::string, std::string>> attrs;
  {
    h5::Id ds(H5Dopen2(file, path.c_str(), H5P_DEFAULT));
    for (const char* a : dataset_attributes)
      if (H5Aexists(ds, a) > 0) attrs.emplace_back(a, h5::read_string_attribute(ds, a));
  }
  if (H5Ldelete(file, path.c_str(), H5P_DEFAULT) < 0) throw h5::Error("H5Ldelete " + path);
  const std::size_t rows = d.dims.empty() ? 1 : std::size_t(d.dims[0]);
  const std::size_t width = d.dims.size() == 2 ? std::size_t(d.dims[1]) : 1;
  const std::size_t slash = path.rfind('/');
  h5::Id parent = h5::open_group(file, path.substr(0, slash));
  h5::Series s(parent, path.substr(slash + 1), width == 1 ? h5::Shape::column : h5::Shape::rows, width,
               h5::Element::float64, width >= 64 ? 1 : 64);
  std::vector<double> row(width);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < width; ++c) {
      const double v = d.values[r * width + c];
      row[c] = !std::isnan(no_value) && v == no_value ? NAN : v;
    }
    s.append(row);
  }
  for (const auto& [name, value] : attrs) h5::write_attribute(s.id(), name, value);
}

}  // namespace layout3_detail

// Rewrites `path` (a complete result file of layout version 4) as version 3: every int64 series of
// /steps, /wells, /newton, /well_switches and /restart float64, every [rows][1] series 1-D,
// /restart/time and dt_next in seconds (the exact values of time_seconds and dt_next_seconds, which
// go), the attribute setup_dt in seconds (setup_dt_seconds goes), the padding column of /wells/at_bhp
// NaN, layout_version 3.
inline void rewrite_as_layout_3(const std::filesystem::path& path)
{
  using namespace layout3_detail;
  h5::File f = h5::File::open_rw(path);
  const hid_t id = f.id();
  if (h5::read_int_attribute(id, "layout_version") != 4) throw h5::Error(path.string() + " is not of layout version 4");
  const bool no_wells = h5::read_string_list(id, "wells/names").empty();
  for (const char* group : {"reports", "steps", "wells", "newton", "well_switches", "restart"}) {
    if (!h5::exists(id, group)) continue;
    for (const auto& name : datasets_in(id, group)) {
      const std::string ds = std::string(group) + "/" + name;
      const auto t = h5::dataset_type(id, ds);
      if (t.element_class == H5T_STRING || ds == "restart/setup_x" || ds == "restart/setup_x0") continue;
      const bool one_column = t.dims.size() == 2 && t.dims[1] == 1;
      if (t.element_class == H5T_INTEGER || one_column)
        rewrite_as_float64(id, ds, ds == "wells/at_bhp" && no_wells ? -1.0 : NAN);
    }
  }
  if (h5::exists(id, "restart/time_seconds")) {
    for (const char* name : {"time", "dt_next"}) {
      const std::string days = std::string("restart/") + name, seconds = days + "_seconds";
      if (H5Ldelete(id, days.c_str(), H5P_DEFAULT) < 0 || H5Lmove(id, seconds.c_str(), id, days.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0)
        throw h5::Error("cannot move " + seconds + " to " + days);
      h5::Id ds(H5Dopen2(id, days.c_str(), H5P_DEFAULT));
      H5Adelete(ds, "description");  // version 3 had none on these
    }
  }
  {
    h5::Id g = h5::open_group(id, "restart");
    if (H5Aexists(g, "setup_dt_seconds") > 0) {
      const double dt = h5::read_double_attribute(g, "setup_dt_seconds");
      H5Adelete(g, "setup_dt_seconds");
      H5Adelete(g, "setup_dt");
      h5::write_attribute(g, "setup_dt", dt);
    }
  }
  H5Adelete(id, "layout_version");
  h5::write_attribute(id, "layout_version", std::int64_t(3));
  f.close();
}

}  // namespace blockres::test
