// Thin RAII layer over the HDF5 C API: files, groups, attributes, datasets, appendable series.
// Every failing call throws h5::Error naming the operation, the object and the file.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace blockres::h5 {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Id {
 public:
  Id() = default;
  explicit Id(hid_t id) : id_(id) {}
  ~Id() { reset(); }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id(Id&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  Id& operator=(Id&& o) noexcept
  {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  hid_t get() const { return id_; }
  // Gives up ownership without closing (the caller closes and checks the result).
  hid_t release() { return std::exchange(id_, H5I_INVALID_HID); }
  operator hid_t() const { return id_; }  // NOLINT: use directly in H5 calls
  void reset() noexcept;

 private:
  hid_t id_ = H5I_INVALID_HID;
};

// Silences HDF5's own error printing (we report errors ourselves); call once at start-up.
void silence_library_errors();

class File {
 public:
  static File create(const std::filesystem::path& path);     // truncates
  static File open_read(const std::filesystem::path& path);  // throws Error with a clear message
  static File open_rw(const std::filesystem::path& path);    // an existing file, for appending
  hid_t id() const { return id_.get(); }
  const std::filesystem::path& path() const { return path_; }
  void close();  // flushes and closes; errors throw
  void flush();  // everything written so far reaches the file on disk (a consistent copy can be taken)

 private:
  Id id_;
  std::filesystem::path path_;
};

Id create_group(hid_t loc, const std::string& name);
Id open_group(hid_t loc, const std::string& name);
bool exists(hid_t loc, const std::string& path);

// Attributes (scalar)
void write_attribute(hid_t obj, const std::string& name, const std::string& value);
void write_attribute(hid_t obj, const std::string& name, double value);
void write_attribute(hid_t obj, const std::string& name, std::int64_t value);
std::string read_string_attribute(hid_t obj, const std::string& name);
double read_double_attribute(hid_t obj, const std::string& name);
std::int64_t read_int_attribute(hid_t obj, const std::string& name);

// Whole datasets. `dims` empty means 1-D of the span's size.
void write_dataset(hid_t loc, const std::string& name, std::span<const double> data,
                   std::vector<hsize_t> dims = {});
void write_dataset(hid_t loc, const std::string& name, std::span<const std::int32_t> data,
                   std::vector<hsize_t> dims = {});
void write_dataset(hid_t loc, const std::string& name, std::span<const std::int64_t> data,
                   std::vector<hsize_t> dims = {});
void write_string_dataset(hid_t loc, const std::string& name, const std::string& text);
void write_string_list(hid_t loc, const std::string& name, const std::vector<std::string>& items);

struct DoubleData {
  std::vector<hsize_t> dims;
  std::vector<double> values;
};
// Reads any numeric dataset converted to double.
DoubleData read_doubles(hid_t loc, const std::string& name);
std::vector<std::int64_t> read_ints(hid_t loc, const std::string& name);
std::string read_string_dataset(hid_t loc, const std::string& name);
std::vector<std::string> read_string_list(hid_t loc, const std::string& name);
// The first dimension of a dataset (its row count; 1 for a scalar).
hsize_t dataset_rows(hid_t loc, const std::string& name);
// Row `row` of a 1-D ([rows]) or 2-D ([rows][width]) numeric dataset, converted to double.
std::vector<double> read_row(hid_t loc, const std::string& name, hsize_t row);
// The shape, element class (H5T_FLOAT, H5T_INTEGER, H5T_STRING, ...) and element size in bytes of
// a dataset: for readers and tests that check what a layout version stores.
struct DatasetType {
  std::vector<hsize_t> dims;
  H5T_class_t element_class = H5T_NO_CLASS;
  std::size_t element_bytes = 0;
};
DatasetType dataset_type(hid_t loc, const std::string& name);

// What a Series stores: float64, or int64 for counters, indices and flags (layout version 4 on).
enum class Element { float64, int64 };
// A Series' shape: `column` is 1-D ([rows]: one value per row, e.g. /steps/dt); `rows` is 2-D
// ([rows][row_size]) whatever row_size is, so a field of a one-cell grid or a rate of one well
// stays [rows][1] (layout version 3 collapsed those to 1-D).
enum class Shape { column, rows };

// A dataset that grows by one row per append, chunked and extendable (chunk_rows rows per chunk).
class Series {
 public:
  Series() = default;
  Series(hid_t loc, const std::string& name, Shape shape, hsize_t row_size, Element element = Element::float64,
         hsize_t chunk_rows = 64);
  // Into an int64 series every value must be an integer (or Error names the dataset): the values
  // are counters held in doubles by their callers (or copied from a layout version 3 file).
  void append(std::span<const double> row);
  void append(std::span<const std::int64_t> row);
  // Appends rows[k] to *series[k] for every k: the same file as appending them one by one, but the
  // chunks of all compressed rows are compressed together, on every thread (a report's fields).
  static void append_rows(std::span<Series* const> series, std::span<const std::span<const double>> rows);
  hsize_t rows() const { return rows_; }
  hsize_t row_size() const { return row_size_; }
  Element element() const { return element_; }
  hid_t id() const { return ds_.get(); }

 private:
  void write_row(hid_t mem_type, const void* data);
  Id ds_;
  hsize_t row_size_ = 0, rows_ = 0;
  int rank_ = 1;
  Element element_ = Element::float64;
  bool direct_ = false;  // compressed rows of one chunk row: written by write_compressed_chunks
  std::string name_;
};

// The name of the object (file and path) for error messages.
std::string describe(hid_t obj);

}  // namespace blockres::h5
