// A minimal streaming JSON writer for benchmark reports (objects, arrays, numbers, strings).
#pragma once

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "input/quote.hpp"

namespace blockres {

class JsonWriter {
 public:
  JsonWriter& begin_object(std::string_view key = {}) { return open(key, '{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array(std::string_view key = {}) { return open(key, '['); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& value(std::string_view key, double v)
  {
    // JSON has no NaN/Inf: write null.
    return raw(key, std::isfinite(v) ? fmt::format("{}", v) : std::string("null"));
  }
  JsonWriter& value(std::string_view key, long long v) { return raw(key, fmt::format("{}", v)); }
  JsonWriter& value(std::string_view key, int v) { return raw(key, fmt::format("{}", v)); }
  JsonWriter& value(std::string_view key, bool v) { return raw(key, v ? "true" : "false"); }
  JsonWriter& value(std::string_view key, std::string_view v) { return raw(key, quote_literal(v)); }
  JsonWriter& value(std::string_view key, const char* v) { return value(key, std::string_view(v)); }
  JsonWriter& null(std::string_view key) { return raw(key, "null"); }
  const std::string& str() const { return out_; }

 private:
  JsonWriter& open(std::string_view key, char bracket)
  {
    prefix(key);
    out_ += bracket;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char bracket)
  {
    first_.pop_back();
    out_ += '\n' + std::string(2 * first_.size(), ' ') + bracket;
    return *this;
  }
  JsonWriter& raw(std::string_view key, const std::string& text)
  {
    prefix(key);
    out_ += text;
    return *this;
  }
  void prefix(std::string_view key)
  {
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
      out_ += '\n' + std::string(2 * first_.size(), ' ');
    }
    if (!key.empty()) out_ += quote_literal(key) + ": ";
  }
  std::string out_;
  std::vector<bool> first_;
};

}  // namespace blockres
