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

// A dataset that grows by one row per append: shape (rows, row_size) of doubles
// (row_size 1 gives a 1-D series), chunked and extendable.
class Series {
 public:
  Series() = default;
  Series(hid_t loc, const std::string& name, hsize_t row_size, hsize_t chunk_rows = 64);
  void append(std::span<const double> row);
  hsize_t rows() const { return rows_; }
  hsize_t row_size() const { return row_size_; }
  hid_t id() const { return ds_.get(); }

 private:
  Id ds_;
  hsize_t row_size_ = 0, rows_ = 0;
  bool direct_ = false;  // compressed rows of one chunk row: written by write_compressed_chunks
  std::string name_;
};

// The name of the object (file and path) for error messages.
std::string describe(hid_t obj);

}  // namespace blockres::h5
