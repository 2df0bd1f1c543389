// HDF5 RAII helpers: every call checked, errors reported with the object and file names.
#include "miniapp/io/h5.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#if BLOCKRES_HAVE_ZLIB
#include <zlib.h>
#endif
#if !defined(H5_VERSION_GE)
#define H5_VERSION_GE(a, b, c) 0
#endif

namespace blockres::h5 {

namespace {

template <class T>
T check(T v, const std::string& what)
{
  if (v < 0) throw Error(what);
  return v;
}

std::vector<hsize_t> dims_or_size(std::vector<hsize_t> dims, std::size_t n)
{
  if (dims.empty()) dims.push_back(n);
  hsize_t total = 1;
  for (auto d : dims) total *= d;
  if (total != n) throw Error("HDF5 write: dataset dimensions do not match the data size");
  return dims;
}

// Byte shuffle + deflate for large numeric data (smooth double fields shrink ~2x; stored baselines
// stay small); readers need nothing special. False when this HDF5 cannot encode deflate.
bool can_deflate()
{
  unsigned int info = 0;
  return H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 && H5Zget_filter_info(H5Z_FILTER_DEFLATE, &info) >= 0 &&
         (info & H5Z_FILTER_CONFIG_ENCODE_ENABLED);
}

void set_compression(hid_t plist)
{
  check(H5Pset_shuffle(plist), "H5Pset_shuffle");
  check(H5Pset_deflate(plist, 4), "H5Pset_deflate");
}

// Elements per chunk of the compressed one-value-per-cell datasets: 512 KB of doubles, so a field
// of many cells is many chunks, compressed side by side.
constexpr hsize_t chunk_elements = hsize_t(1) << 16;

// The chunks of a row of n elements (element_size bytes, native = file layout) of a chunked
// dataset with the shuffle + deflate(4) pipeline of set_compression, every chunk (the last padded
// with zeros to the chunk size, as HDF5 stores it) shuffled and deflated on its own, written as it
// is (H5Dwrite_chunk, filter mask 0: both filters applied). Readers see the same file as with
// H5Dwrite; the deflate filter, single-threaded in HDF5, was most of the time a run spent writing
// files (0.55 s of a 1M-cell run's start-up on 2 cores).
struct ChunkedRow {
  hid_t ds;
  const void* data;
  std::size_t n, element_size;
  hsize_t chunk;
  int rank;
  hsize_t row;
  std::string what;
  std::size_t nchunks() const { return static_cast<std::size_t>((n + chunk - 1) / chunk); }
};

#if BLOCKRES_HAVE_ZLIB && H5_VERSION_GE(1, 10, 3)
constexpr bool can_write_chunks = true;
// Compresses the chunks of every row in OpenMP loops over all of them (a field of 100k cells is 2
// chunks: a loop per field kept 2 threads busy), then writes them in order. At most
// batch_chunks chunks (512 KB each before compression) are held compressed at a time, whatever
// the rows' total size.
constexpr std::size_t batch_chunks = 256;
void write_compressed_rows(std::span<const ChunkedRow> rows)
{
  std::vector<std::pair<std::size_t, std::size_t>> all;  // (row, chunk)
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < rows[r].nchunks(); ++c) all.emplace_back(r, c);
  for (std::size_t j0 = 0; j0 < all.size(); j0 += batch_chunks) {
    const std::span<const std::pair<std::size_t, std::size_t>> jobs(all.data() + j0,
                                                                    std::min(batch_chunks, all.size() - j0));
    std::vector<std::vector<unsigned char>> out(jobs.size());
    bool ok = true;
#pragma omp parallel for schedule(dynamic)
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      bool done = false;
      try {  // nothing may leave an OpenMP region: an allocation failure is reported after it
        const ChunkedRow& w = rows[jobs[j].first];
        const std::size_t c = jobs[j].second, chunk = static_cast<std::size_t>(w.chunk);
        const std::size_t first = c * chunk, count = std::min(chunk, w.n - first), es = w.element_size;
        const auto* src = static_cast<const unsigned char*>(w.data) + first * es;
        std::vector<unsigned char> shuffled(chunk * es, 0);  // byte b of element e at b * chunk + e
        for (std::size_t e = 0; e < count; ++e)
          for (std::size_t b = 0; b < es; ++b) shuffled[b * chunk + e] = src[e * es + b];
        uLongf len = compressBound(static_cast<uLong>(chunk * es));
        out[j].resize(len);
        done = compress2(out[j].data(), &len, shuffled.data(), static_cast<uLong>(chunk * es), 4) == Z_OK;
        out[j].resize(len);
      } catch (...) {
        done = false;
      }
      if (!done) {
#pragma omp atomic write
        ok = false;
      }
    }
    if (!ok) throw Error(fmt::format("cannot compress {} (out of memory?)", rows[jobs.front().first].what));
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const ChunkedRow& w = rows[jobs[j].first];
      const hsize_t c = jobs[j].second;
      const hsize_t offset[2] = {w.rank == 1 ? c * w.chunk : w.row, c * w.chunk};
      check(H5Dwrite_chunk(w.ds, H5P_DEFAULT, 0, offset, out[j].size(), out[j].data()), fmt::format("cannot write {}", w.what));
    }
  }
}
#else
constexpr bool can_write_chunks = false;
void write_compressed_rows(std::span<const ChunkedRow>) { throw Error("HDF5 direct chunk writes are not available"); }
#endif

// Direct chunk writes bypass type conversion: only when memory and file types are the same bytes.
bool same_layout(hid_t file_type, hid_t mem_type) { return H5Tequal(file_type, mem_type) > 0; }

void write_numeric(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type, const void* data, std::size_t n,
                   std::vector<hsize_t> dims)
{
  dims = dims_or_size(std::move(dims), n);
  Id space(check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "H5Screate_simple"));
  Id plist(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"));
  const bool compressed = dims.size() == 1 && n >= 4096 && can_deflate();
  const hsize_t chunk = std::min<hsize_t>(n, chunk_elements);
  if (compressed) {
    check(H5Pset_chunk(plist, 1, &chunk), "H5Pset_chunk");
    set_compression(plist);
  }
  Id ds(check(H5Dcreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, plist, H5P_DEFAULT),
              fmt::format("cannot create dataset '{}' in {}", name, describe(loc))));
  if (n == 0) return;
  const std::string what = fmt::format("dataset '{}' in {}", name, describe(loc));
  if (compressed && can_write_chunks && same_layout(file_type, mem_type)) {
    const ChunkedRow row{ds, data, n, H5Tget_size(mem_type), chunk, 1, 0, what};
    write_compressed_rows(std::span<const ChunkedRow>(&row, 1));
    return;
  }
  check(H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "cannot write " + what);
}

Id open_dataset(hid_t loc, const std::string& name)
{
  if (!exists(loc, name)) throw Error(fmt::format("dataset '{}' not found in {}", name, describe(loc)));
  const hid_t id = H5Dopen2(loc, name.c_str(), H5P_DEFAULT);
  if (id < 0) throw Error(fmt::format("cannot open '{}' in {} as a dataset", name, describe(loc)));
  return Id(id);
}

std::vector<hsize_t> dataset_dims(hid_t ds)
{
  Id space(check(H5Dget_space(ds), "H5Dget_space"));
  const int rank = check(H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) check(H5Sget_simple_extent_dims(space, dims.data(), nullptr), "H5Sget_simple_extent_dims");
  return dims;
}

Id string_type()
{
  Id t(check(H5Tcopy(H5T_C_S1), "H5Tcopy"));
  check(H5Tset_size(t, H5T_VARIABLE), "H5Tset_size");
  check(H5Tset_cset(t, H5T_CSET_UTF8), "H5Tset_cset");
  return t;
}

}  // namespace

void Id::reset() noexcept
{
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: break;
  }
  id_ = H5I_INVALID_HID;
}

void silence_library_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string describe(hid_t obj)
{
  char file[1024] = {0}, name[1024] = {0};
  if (H5Fget_name(obj, file, sizeof file) < 0) file[0] = 0;
  if (H5Iget_name(obj, name, sizeof name) < 0) name[0] = 0;
  return fmt::format("{}:{}", file, name[0] ? name : "/");
}

File File::create(const std::filesystem::path& path)
{
  silence_library_errors();
  File f;
  f.path_ = path;
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) throw Error(fmt::format("cannot create HDF5 file '{}'", path.string()));
  f.id_ = Id(id);
  return f;
}

File File::open_read(const std::filesystem::path& path)
{
  silence_library_errors();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(fmt::format("file '{}' does not exist", path.string()));
  if (std::filesystem::is_directory(path, ec)) throw Error(fmt::format("'{}' is a directory, not an HDF5 file", path.string()));
  const htri_t is_h5 = H5Fis_hdf5(path.c_str());
  if (is_h5 <= 0) throw Error(fmt::format("'{}' is not an HDF5 file (or is truncated/unreadable)", path.string()));
  File f;
  f.path_ = path;
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) throw Error(fmt::format("cannot open HDF5 file '{}' (truncated or corrupt?)", path.string()));
  f.id_ = Id(id);
  return f;
}

File File::open_rw(const std::filesystem::path& path)
{
  silence_library_errors();
  File f;
  f.path_ = path;
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (id < 0) throw Error(fmt::format("cannot open HDF5 file '{}' for writing", path.string()));
  f.id_ = Id(id);
  return f;
}

void File::flush()
{
  check(H5Fflush(id_, H5F_SCOPE_GLOBAL), fmt::format("cannot flush '{}'", path_.string()));
}

void File::close()
{
  if (id_.get() < 0) return;
  check(H5Fflush(id_, H5F_SCOPE_LOCAL), fmt::format("cannot flush '{}'", path_.string()));
  if (H5Fclose(id_.release()) < 0) throw Error(fmt::format("cannot close '{}'", path_.string()));
}

Id create_group(hid_t loc, const std::string& name)
{
  return Id(check(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                  fmt::format("cannot create group '{}' in {}", name, describe(loc))));
}

Id open_group(hid_t loc, const std::string& name)
{
  if (!exists(loc, name)) throw Error(fmt::format("group '{}' not found in {}", name, describe(loc)));
  return Id(check(H5Gopen2(loc, name.c_str(), H5P_DEFAULT), fmt::format("cannot open group '{}' in {}", name, describe(loc))));
}

bool exists(hid_t loc, const std::string& path)
{
  // Check every prefix: H5Lexists fails on a path whose parent is missing.
  std::size_t pos = 0;
  while (true) {
    const std::size_t next = path.find('/', pos + 1);
    const std::string prefix = path.substr(0, next);
    if (!prefix.empty() && prefix != "/" && H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (next == std::string::npos) return true;
    pos = next;
  }
}

void write_attribute(hid_t obj, const std::string& name, const std::string& value)
{
  Id type = string_type();
  Id space(check(H5Screate(H5S_SCALAR), "H5Screate"));
  Id attr(check(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                fmt::format("cannot create attribute '{}' on {}", name, describe(obj))));
  const char* p = value.c_str();
  check(H5Awrite(attr, type, &p), fmt::format("cannot write attribute '{}'", name));
}

void write_attribute(hid_t obj, const std::string& name, double value)
{
  Id space(check(H5Screate(H5S_SCALAR), "H5Screate"));
  Id attr(check(H5Acreate2(obj, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT),
                fmt::format("cannot create attribute '{}' on {}", name, describe(obj))));
  check(H5Awrite(attr, H5T_NATIVE_DOUBLE, &value), fmt::format("cannot write attribute '{}'", name));
}

void write_attribute(hid_t obj, const std::string& name, std::int64_t value)
{
  Id space(check(H5Screate(H5S_SCALAR), "H5Screate"));
  Id attr(check(H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT),
                fmt::format("cannot create attribute '{}' on {}", name, describe(obj))));
  check(H5Awrite(attr, H5T_NATIVE_INT64, &value), fmt::format("cannot write attribute '{}'", name));
}

namespace {
Id open_attribute(hid_t obj, const std::string& name)
{
  if (H5Aexists(obj, name.c_str()) <= 0) throw Error(fmt::format("attribute '{}' not found on {}", name, describe(obj)));
  return Id(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), fmt::format("cannot open attribute '{}'", name)));
}
}  // namespace

std::string read_string_attribute(hid_t obj, const std::string& name)
{
  Id attr = open_attribute(obj, name);
  Id ftype(check(H5Aget_type(attr), "H5Aget_type"));
  if (H5Tget_class(ftype) != H5T_STRING) throw Error(fmt::format("attribute '{}' on {} is not a string", name, describe(obj)));
  if (H5Tis_variable_str(ftype) > 0) {
    Id type = string_type();
    char* p = nullptr;
    check(H5Aread(attr, type, &p), fmt::format("cannot read attribute '{}'", name));
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  const std::size_t n = H5Tget_size(ftype);
  std::string s(n, '\0');
  check(H5Aread(attr, ftype, s.data()), fmt::format("cannot read attribute '{}'", name));
  s.resize(std::strlen(s.c_str()));
  return s;
}

double read_double_attribute(hid_t obj, const std::string& name)
{
  Id attr = open_attribute(obj, name);
  double v = 0;
  check(H5Aread(attr, H5T_NATIVE_DOUBLE, &v), fmt::format("cannot read attribute '{}' as a number", name));
  return v;
}

std::int64_t read_int_attribute(hid_t obj, const std::string& name)
{
  Id attr = open_attribute(obj, name);
  std::int64_t v = 0;
  check(H5Aread(attr, H5T_NATIVE_INT64, &v), fmt::format("cannot read attribute '{}' as an integer", name));
  return v;
}

void write_dataset(hid_t loc, const std::string& name, std::span<const double> data, std::vector<hsize_t> dims)
{
  write_numeric(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data.data(), data.size(), std::move(dims));
}
void write_dataset(hid_t loc, const std::string& name, std::span<const std::int32_t> data, std::vector<hsize_t> dims)
{
  write_numeric(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, data.data(), data.size(), std::move(dims));
}
void write_dataset(hid_t loc, const std::string& name, std::span<const std::int64_t> data, std::vector<hsize_t> dims)
{
  write_numeric(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, data.data(), data.size(), std::move(dims));
}

void write_string_dataset(hid_t loc, const std::string& name, const std::string& text)
{
  Id type = string_type();
  Id space(check(H5Screate(H5S_SCALAR), "H5Screate"));
  Id ds(check(H5Dcreate2(loc, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
              fmt::format("cannot create dataset '{}' in {}", name, describe(loc))));
  const char* p = text.c_str();
  check(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &p), fmt::format("cannot write dataset '{}'", name));
}

void write_string_list(hid_t loc, const std::string& name, const std::vector<std::string>& items)
{
  Id type = string_type();
  const hsize_t n = items.size();
  Id space(check(H5Screate_simple(1, &n, nullptr), "H5Screate_simple"));
  Id ds(check(H5Dcreate2(loc, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
              fmt::format("cannot create dataset '{}' in {}", name, describe(loc))));
  std::vector<const char*> ptrs;
  for (const auto& s : items) ptrs.push_back(s.c_str());
  if (n > 0) check(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), fmt::format("cannot write dataset '{}'", name));
}

DoubleData read_doubles(hid_t loc, const std::string& name)
{
  Id ds = open_dataset(loc, name);
  Id ftype(check(H5Dget_type(ds), "H5Dget_type"));
  const H5T_class_t cls = H5Tget_class(ftype);
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw Error(fmt::format("dataset '{}' in {} is not numeric", name, describe(loc)));
  DoubleData d;
  d.dims = dataset_dims(ds);
  hsize_t n = 1;
  for (auto x : d.dims) n *= x;
  d.values.resize(n);
  if (n > 0)
    check(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d.values.data()),
          fmt::format("cannot read dataset '{}' in {} (truncated file?)", name, describe(loc)));
  return d;
}

std::vector<std::int64_t> read_ints(hid_t loc, const std::string& name)
{
  Id ds = open_dataset(loc, name);
  Id ftype(check(H5Dget_type(ds), "H5Dget_type"));
  if (H5Tget_class(ftype) != H5T_INTEGER) throw Error(fmt::format("dataset '{}' in {} is not integer", name, describe(loc)));
  hsize_t n = 1;
  for (auto x : dataset_dims(ds)) n *= x;
  std::vector<std::int64_t> v(n);
  if (n > 0)
    check(H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
          fmt::format("cannot read dataset '{}' in {}", name, describe(loc)));
  return v;
}

std::string read_string_dataset(hid_t loc, const std::string& name)
{
  Id ds = open_dataset(loc, name);
  Id ftype(check(H5Dget_type(ds), "H5Dget_type"));
  if (H5Tget_class(ftype) != H5T_STRING || H5Tis_variable_str(ftype) <= 0)
    throw Error(fmt::format("dataset '{}' in {} is not a variable-length string", name, describe(loc)));
  Id type = string_type();
  char* p = nullptr;
  check(H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &p), fmt::format("cannot read dataset '{}'", name));
  std::string s = p ? p : "";
  H5free_memory(p);
  return s;
}

std::vector<std::string> read_string_list(hid_t loc, const std::string& name)
{
  Id ds = open_dataset(loc, name);
  Id ftype(check(H5Dget_type(ds), "H5Dget_type"));
  if (H5Tget_class(ftype) != H5T_STRING || H5Tis_variable_str(ftype) <= 0)
    throw Error(fmt::format("dataset '{}' in {} is not a list of strings", name, describe(loc)));
  hsize_t n = 1;
  for (auto x : dataset_dims(ds)) n *= x;
  std::vector<char*> ptrs(n, nullptr);
  Id type = string_type();
  if (n > 0) check(H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), fmt::format("cannot read dataset '{}'", name));
  std::vector<std::string> out;
  for (char* p : ptrs) {
    out.emplace_back(p ? p : "");
    H5free_memory(p);
  }
  return out;
}

hsize_t dataset_rows(hid_t loc, const std::string& name)
{
  Id ds = open_dataset(loc, name);
  const auto dims = dataset_dims(ds);
  return dims.empty() ? 1 : dims[0];
}

std::vector<double> read_row(hid_t loc, const std::string& name, hsize_t row)
{
  Id ds = open_dataset(loc, name);
  Id ftype(check(H5Dget_type(ds), "H5Dget_type"));
  const H5T_class_t cls = H5Tget_class(ftype);
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw Error(fmt::format("dataset '{}' in {} is not numeric", name, describe(loc)));
  const auto dims = dataset_dims(ds);
  if (dims.empty() || dims.size() > 2 || row >= dims[0])
    throw Error(fmt::format("dataset '{}' in {} has no row {}", name, describe(loc), row));
  const int rank = static_cast<int>(dims.size());
  const hsize_t width = rank == 2 ? dims[1] : 1;
  std::vector<double> out(static_cast<std::size_t>(width));
  Id fspace(check(H5Dget_space(ds), "H5Dget_space"));
  const hsize_t start[2] = {row, 0}, count[2] = {1, width};
  check(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, count, nullptr), "H5Sselect_hyperslab");
  Id mspace(check(H5Screate_simple(rank, count, nullptr), "H5Screate_simple"));
  if (width > 0)
    check(H5Dread(ds, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, out.data()),
          fmt::format("cannot read row {} of dataset '{}' in {} (truncated file?)", row, name, describe(loc)));
  return out;
}

DatasetType dataset_type(hid_t loc, const std::string& name)
{
  Id ds = open_dataset(loc, name);
  Id ftype(check(H5Dget_type(ds), "H5Dget_type"));
  DatasetType t;
  t.dims = dataset_dims(ds);
  t.element_class = H5Tget_class(ftype);
  t.element_bytes = H5Tget_size(ftype);
  return t;
}

Series::Series(hid_t loc, const std::string& name, Shape shape, hsize_t row_size, Element element, hsize_t chunk_rows)
    : row_size_(row_size), rank_(shape == Shape::column ? 1 : 2), element_(element), name_(name)
{
  if (shape == Shape::column && row_size != 1)
    throw Error(fmt::format("Series '{}': a column holds one value per row, not {}", name, row_size));
  const hsize_t dims[2] = {0, row_size}, maxdims[2] = {H5S_UNLIMITED, row_size};
  // Field rows (one value per cell) are compressed, in chunks of one row and chunk_elements cells.
  const bool compressed = row_size >= 64 && can_deflate();
  // Rows written chunk by chunk bypass type conversion: float64 rows only (as the callers' doubles).
  direct_ = compressed && rank_ == 2 && chunk_rows == 1 && element == Element::float64;
  const hsize_t chunk[2] = {chunk_rows, direct_ ? std::min(row_size, chunk_elements) : row_size};
  Id space(check(H5Screate_simple(rank_, dims, maxdims), "H5Screate_simple"));
  Id plist(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"));
  check(H5Pset_chunk(plist, rank_, chunk), "H5Pset_chunk");
  if (compressed) set_compression(plist);
  const hid_t file_type = element == Element::int64 ? H5T_STD_I64LE : H5T_IEEE_F64LE;
  ds_ = Id(check(H5Dcreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, plist, H5P_DEFAULT),
                 fmt::format("cannot create dataset '{}' in {}", name, describe(loc))));
}

void Series::append(std::span<const double> row)
{
  if (row.size() != row_size_) throw Error(fmt::format("Series '{}': row of {} values, expected {}", name_, row.size(), row_size_));
  if (element_ == Element::int64) {
    // Exact integers only: a fraction or a NaN here is a caller's bug, not something to round away.
    std::vector<std::int64_t> ints(row.size());
    for (std::size_t k = 0; k < row.size(); ++k) {
      const double v = row[k];
      if (!(v >= -9.2e18 && v <= 9.2e18) || v != std::trunc(v))
        throw Error(fmt::format("Series '{}': {} is not an integer (the dataset holds int64)", name_, v));
      ints[k] = static_cast<std::int64_t>(v);
    }
    write_row(H5T_NATIVE_INT64, ints.data());
    return;
  }
  write_row(H5T_NATIVE_DOUBLE, row.data());
}

void Series::append(std::span<const std::int64_t> row)
{
  if (row.size() != row_size_) throw Error(fmt::format("Series '{}': row of {} values, expected {}", name_, row.size(), row_size_));
  if (element_ != Element::int64) throw Error(fmt::format("Series '{}': integers appended to a float64 dataset", name_));
  write_row(H5T_NATIVE_INT64, row.data());
}

// Extends the dataset by one row and writes `data` (row_size_ values of mem_type) into it: float64
// field rows chunk by chunk, compressed on every thread, where they can; else through H5Dwrite,
// which converts to the file type.
void Series::write_row(hid_t mem_type, const void* data)
{
  const hsize_t new_dims[2] = {rows_ + 1, row_size_};
  check(H5Dset_extent(ds_, new_dims), fmt::format("cannot extend dataset '{}'", name_));
  if (direct_ && can_write_chunks && H5Tequal(mem_type, H5T_NATIVE_DOUBLE) > 0) {
    const ChunkedRow row{ds_.get(), data, static_cast<std::size_t>(row_size_), sizeof(double),
                         std::min(row_size_, chunk_elements), 2, rows_, fmt::format("dataset '{}'", name_)};
    write_compressed_rows(std::span<const ChunkedRow>(&row, 1));
    ++rows_;
    return;
  }
  Id fspace(check(H5Dget_space(ds_), "H5Dget_space"));
  const hsize_t start[2] = {rows_, 0}, count[2] = {1, row_size_};
  check(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, count, nullptr), "H5Sselect_hyperslab");
  Id mspace(check(H5Screate_simple(rank_, count, nullptr), "H5Screate_simple"));
  check(H5Dwrite(ds_, mem_type, mspace, fspace, H5P_DEFAULT, data), fmt::format("cannot write to dataset '{}'", name_));
  ++rows_;
}

void Series::append_rows(std::span<Series* const> series, std::span<const std::span<const double>> rows)
{
  if (series.size() != rows.size())
    throw Error(fmt::format("Series::append_rows: {} series, {} rows", series.size(), rows.size()));
  std::vector<Series*> sorted(series.begin(), series.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw Error("Series::append_rows: a series is listed twice (one row each)");
  for (std::size_t k = 0; k < series.size(); ++k)  // every row checked before any dataset grows
    if (rows[k].size() != series[k]->row_size_)
      throw Error(fmt::format("Series '{}': row of {} values, expected {}", series[k]->name_, rows[k].size(),
                              series[k]->row_size_));
  std::vector<ChunkedRow> chunked;
  std::vector<Series*> grown;
  for (std::size_t k = 0; k < series.size(); ++k) {
    Series& s = *series[k];
    if (!(s.direct_ && can_write_chunks)) {
      s.append(rows[k]);  // checked and converted as one row
      continue;
    }
    const hsize_t new_dims[2] = {s.rows_ + 1, s.row_size_};
    check(H5Dset_extent(s.ds_, new_dims), fmt::format("cannot extend dataset '{}'", s.name_));
    chunked.push_back({s.ds_.get(), rows[k].data(), static_cast<std::size_t>(s.row_size_), sizeof(double),
                       std::min(s.row_size_, chunk_elements), 2, s.rows_, fmt::format("dataset '{}'", s.name_)});
    grown.push_back(&s);
  }
  write_compressed_rows(chunked);
  for (Series* s : grown) ++s->rows_;
}

}  // namespace blockres::h5
