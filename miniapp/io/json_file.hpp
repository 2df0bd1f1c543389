// JSON files (bench reports, verify --json) through nlohmann-json: the Json type, the atomic write and the checked read.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace blockres {

// Objects keep their keys in insertion order, so a file reads in the order its writer builds it.
using Json = nlohmann::ordered_json;

// Writes text + '\n' to path + ".tmp" (creating path's folder) and renames it to path, so the file appears
// complete or not at all. Throws std::runtime_error naming the file when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

// j indented by 2, atomically (write_file_atomically). JSON has no NaN or infinity: a non-finite number is
// written as null (nlohmann's serializer does so), which a reader gets as "no value" and never as a number;
// a count that may be missing is put in as an integer or null by its writer, not as a NaN double. A string
// that is not valid UTF-8 (a path, a device name) gets U+FFFD for its bad bytes rather than losing the report.
void write_json_file(const std::string& path, const Json& j);

// The JSON held by a file. Throws std::runtime_error naming the file when it is missing or not valid JSON.
Json read_json_file(const std::string& path);

}  // namespace blockres
