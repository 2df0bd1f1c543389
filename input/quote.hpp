// A string as a double-quoted TOML basic string (escapes \" \\ \n \t \r \uXXXX): for --set values and for
// the names quoted in deck messages.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace blockres {

inline std::string quote_literal(std::string_view s)
{
  std::string o = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) o += fmt::format("\\u{:04X}", int(c));
        else o += c;
    }
  }
  return o + '"';
}

}  // namespace blockres
