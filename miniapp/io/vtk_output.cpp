// VTK time-series writer (vtk_output.hpp): .vtr through VTK's XML writer, .pvd as text; a throwing stub without VTK.
#include "miniapp/io/vtk_output.hpp"

#include "miniapp/io/fields.hpp"
#include "physics/units.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <system_error>

#if BLOCKRES_HAVE_VTK
#include <vtkCallbackCommand.h>
#include <vtkCellData.h>
#include <vtkCommand.h>
#include <vtkDataSetAttributes.h>
#include <vtkDoubleArray.h>
#include <vtkExecutive.h>
#include <vtkNew.h>
#include <vtkRectilinearGrid.h>
#include <vtkSmartPointer.h>
#include <vtkTypeInt32Array.h>
#include <vtkUnsignedCharArray.h>
#include <vtkXMLRectilinearGridWriter.h>
#endif

namespace blockres {

namespace fs = std::filesystem;

#if BLOCKRES_HAVE_VTK

namespace {

// Runs a filesystem step; its error becomes a VtkError that says what the step was for.
template <class F>
void fs_step(const std::string& what, F&& step)
{
  try {
    step();
  } catch (const fs::filesystem_error& e) {
    throw VtkError(fmt::format("VTK output: cannot {}: {}", what, e.code().message()));
  }
}

std::string xml_attribute(const std::string& s)
{
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// VTK hands an error observer its whole report ("ERROR: In <source file>, line N\n<class> (<address>):
// <message>"); only the message means anything to a user.
void record_vtk_error(vtkObject*, unsigned long, void* client_data, void* call_data)
{
  auto& message = *static_cast<std::string*>(client_data);
  if (!message.empty() || !call_data) return;  // the first error is the cause
  std::string text = static_cast<const char*>(call_data);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (const auto nl = text.rfind('\n'); nl != std::string::npos) text.erase(0, nl + 1);
  if (const auto sep = text.find("): "); sep != std::string::npos) text.erase(0, sep + 3);
  message = text.empty() ? "unknown VTK error" : text;
}

// Face coordinates along one axis: origin, origin + d[0], ... Named, or VTK names them after
// their address and the same run would give different files.
vtkSmartPointer<vtkDoubleArray> faces(const char* name, const std::vector<double>& d, double origin)
{
  auto a = vtkSmartPointer<vtkDoubleArray>::New();
  a->SetName(name);
  a->SetNumberOfTuples(vtkIdType(d.size()) + 1);
  double s = origin;
  a->SetValue(0, s);
  for (std::size_t i = 0; i < d.size(); ++i) a->SetValue(vtkIdType(i) + 1, s += d[i]);
  return a;
}

template <class Array>
vtkSmartPointer<Array> cell_array(const char* name, vtkIdType n)
{
  auto a = vtkSmartPointer<Array>::New();
  a->SetName(name);
  a->SetNumberOfTuples(n);
  return a;
}

}  // namespace

struct VtkSeriesWriter::Impl {
  const physics::Grid& grid;
  const physics::Model& model;
  vtkNew<vtkRectilinearGrid> mesh;
  std::vector<vtkSmartPointer<vtkDoubleArray>> fields;  // the model's cell fields: change from report to report
  vtkNew<vtkXMLRectilinearGridWriter> writer;
  vtkNew<vtkCallbackCommand> on_error;
  std::string error;  // first error VTK reported during the current Write()

  Impl(const physics::Grid& g, const physics::RockSpec& rock, const physics::Model& m) : grid(g), model(m)
  {
    const auto& gs = g.spec();
    const vtkIdType n = g.num_cells();
    if (rock.porosity.size() != std::size_t(n) || rock.kx.size() != std::size_t(n) ||
        rock.ky.size() != std::size_t(n) || rock.kz.size() != std::size_t(n))
      throw VtkError("VTK output: rock properties do not match the grid's cell count");
    // (A distributed run's model holds one rank's cells; the reports' states are gathered over the whole grid.)
    (void)m;
    mesh->SetDimensions(gs.nx + 1, gs.ny + 1, gs.nz + 1);
    mesh->SetXCoordinates(faces("x", gs.dx, 0.0));
    mesh->SetYCoordinates(faces("y", gs.dy, 0.0));
    mesh->SetZCoordinates(faces("depth", gs.dz, gs.top));  // as /grid/depth

    vtkCellData* cd = mesh->GetCellData();
    for (const auto& q : m.cell_fields()) {
      for (const char* fixed : {"porosity", "permx", "permy", "permz", "active", "i", "j", "k"})
        if (q.name == fixed || q.name == vtkDataSetAttributes::GhostArrayName())
          throw VtkError(fmt::format("VTK output: the model's cell field '{}' takes the name of a static field", q.name));
      fields.push_back(cell_array<vtkDoubleArray>(q.name.c_str(), n));
      if (fields.size() == 1)
        cd->SetScalars(fields.back());  // what ParaView colours by first
      else
        cd->AddArray(fields.back());
    }
    auto porosity = cell_array<vtkDoubleArray>("porosity", n);
    auto permx = cell_array<vtkDoubleArray>("permx", n), permy = cell_array<vtkDoubleArray>("permy", n),
         permz = cell_array<vtkDoubleArray>("permz", n);
    auto active = cell_array<vtkTypeInt32Array>("active", n);
    auto ci = cell_array<vtkTypeInt32Array>("i", n), cj = cell_array<vtkTypeInt32Array>("j", n),
         ck = cell_array<vtkTypeInt32Array>("k", n);
    auto ghost = cell_array<vtkUnsignedCharArray>(vtkDataSetAttributes::GhostArrayName(), n);
    for (vtkIdType c = 0; c < n; ++c) {
      porosity->SetValue(c, rock.porosity[c]);
      // Same expression as the HDF5 writer's /static, so the two files agree bit for bit.
      permx->SetValue(c, rock.kx[c] / units::millidarcy);
      permy->SetValue(c, rock.ky[c] / units::millidarcy);
      permz->SetValue(c, rock.kz[c] / units::millidarcy);
      const bool is_active = g.active_index(index_t(c)) >= 0;
      active->SetValue(c, is_active ? 1 : 0);
      ci->SetValue(c, std::int32_t(c % gs.nx) + 1);
      cj->SetValue(c, std::int32_t(c / gs.nx % gs.ny) + 1);
      ck->SetValue(c, std::int32_t(c / (vtkIdType(gs.nx) * gs.ny)) + 1);
      ghost->SetValue(c, is_active ? 0 : vtkDataSetAttributes::HIDDENCELL);
    }
    for (vtkAbstractArray* a :
         std::initializer_list<vtkAbstractArray*>{porosity, permx, permy, permz, active, ci, cj, ck, ghost})
      cd->AddArray(a);

    writer->SetInputData(mesh);
    writer->SetDataModeToBinary();
    writer->SetCompressorTypeToZLib();
    writer->SetHeaderTypeToUInt64();  // block sizes of grids beyond 4 GiB fit
    on_error->SetCallback(record_vtk_error);
    on_error->SetClientData(&error);
    writer->AddObserver(vtkCommand::ErrorEvent, on_error);
    // The pipeline repeats a writer's failure as an error of its own, multi-line dump included;
    // observed, it stays off stderr (the writer's message is the one that names the cause).
    writer->GetExecutive()->AddObserver(vtkCommand::ErrorEvent, on_error);
  }

  void write(const fs::path& file)
  {
    error.clear();
    writer->SetFileName(file.c_str());
    const int ok = writer->Write();
    if (ok != 1 || !error.empty() || writer->GetErrorCode() != 0)
      throw VtkError(fmt::format("cannot write VTK file '{}': {}", file.string(),
                                 error.empty() ? fmt::format("the VTK writer failed (error code {})",
                                                             writer->GetErrorCode())
                                               : error));
  }
};

bool vtk_output_available() { return true; }

VtkSeriesWriter::VtkSeriesWriter(const fs::path& output_dir, const std::string& name, const physics::Grid& grid,
                                 const physics::RockSpec& rock, const physics::Model& model)
    : pvd_(output_dir / (name + ".pvd")),
      series_dir_(output_dir / (name + "_vtk")),
      staging_dir_(output_dir / (name + "_vtk.tmp")),
      name_(name),
      impl_(std::make_unique<Impl>(grid, rock, model))
{
  // A staging directory can only be a leftover of a run that was killed; it is ours to replace.
  fs_step(fmt::format("create the directory '{}'", staging_dir_.string()), [&] {
    fs::remove_all(staging_dir_);
    fs::create_directories(staging_dir_);
  });
}

VtkSeriesWriter::~VtkSeriesWriter()
{
  if (committed_) return;
  std::error_code ec;  // best effort: a destructor must not throw, and the run has already failed
  fs::remove_all(staging_dir_, ec);
  fs::remove(pvd_.string() + ".tmp", ec);
}

void VtkSeriesWriter::write_report(double time, const std::vector<double>& x)
{
  if (committed_) throw VtkError("VTK output: write_report after commit");
  const auto& g = impl_->grid;
  const auto& model = impl_->model;
  const std::size_t expected = std::size_t(g.num_active()) * std::size_t(model.block_size());
  if (x.size() != expected)
    throw std::invalid_argument(fmt::format("VTK output: state has {} values, expected {}", x.size(), expected));
  // The model's values through the HDF5 writer's mapping: the two files agree bit for bit.
  const auto values = model.cell_field_values(x);
  if (values.size() != impl_->fields.size())
    throw std::logic_error(fmt::format("model '{}': cell_field_values gives {} fields, cell_fields lists {}",
                                       model.type(), values.size(), impl_->fields.size()));
  for (std::size_t f = 0; f < values.size(); ++f) {
    const auto full = full_grid_values(g, values[f]);
    vtkDoubleArray* a = impl_->fields[f];
    for (std::size_t c = 0; c < full.size(); ++c) a->SetValue(vtkIdType(c), full[c]);
    a->Modified();
  }
  const std::string file = fmt::format("{}_{:04d}.vtr", name_, entries_.size());
  impl_->write(staging_dir_ / file);
  entries_.emplace_back(time / units::day, (fs::path(name_ + "_vtk") / file).generic_string());
}

void VtkSeriesWriter::commit()
{
  if (committed_) return;
  // The old entry point goes first: while the directories are swapped no .pvd names a series
  // that is half old, half new.
  fs_step(fmt::format("replace '{}' by the new series", series_dir_.string()), [&] {
    fs::remove(pvd_);
    fs::remove_all(series_dir_);
    fs::rename(staging_dir_, series_dir_);
  });

  const fs::path tmp = pvd_.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << "<?xml version=\"1.0\"?>\n"
        << "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\""
        << (std::endian::native == std::endian::little ? "LittleEndian" : "BigEndian") << "\">\n"
        << "  <Collection>\n";
    // "{}" prints the shortest text that reads back to the same double: the times equal /reports/time.
    for (const auto& [t, file] : entries_)
      out << fmt::format("    <DataSet timestep=\"{}\" group=\"\" part=\"0\" file=\"{}\"/>\n", t, xml_attribute(file));
    out << "  </Collection>\n</VTKFile>\n";
    out.close();
    if (!out) throw VtkError(fmt::format("cannot write VTK collection '{}'", tmp.string()));
  }
  fs_step(fmt::format("rename '{}' to '{}'", tmp.string(), pvd_.string()), [&] { fs::rename(tmp, pvd_); });
  committed_ = true;
}

#else  // no VTK in this build: the deck loader refuses output.vtk = true, so nothing reaches this

struct VtkSeriesWriter::Impl {};

bool vtk_output_available() { return false; }

namespace {
[[noreturn]] void not_built()
{
  throw VtkError("VTK output is not available: this blockres was built without VTK (BLOCKRES_VTK=OFF or VTK not "
                 "found)");
}
}  // namespace

VtkSeriesWriter::VtkSeriesWriter(const fs::path&, const std::string&, const physics::Grid&,
                                 const physics::RockSpec&, const physics::Model&)
{
  not_built();
}
VtkSeriesWriter::~VtkSeriesWriter() = default;
void VtkSeriesWriter::write_report(double, const std::vector<double>&) { not_built(); }
void VtkSeriesWriter::commit() { not_built(); }

#endif

}  // namespace blockres
