// Helpers of the deck-reader tests (miniapp/io and the model deck readers): a deck edited by text
// replacement, the line a piece of it stands on, the message a bad deck throws, and the form every
// InputError message must have.
#pragma once

#include "input/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace blockres::test_deck {

// Replaces the first occurrence of `from` (which must exist) by `to`.
inline std::string edit(std::string text, const std::string& from, const std::string& to)
{
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("edit: '" + from + "' not in the deck");
  return text.replace(at, from.size(), to);
}

// 1-based line of the first line of `text` that contains `needle`.
inline int line_of(const std::string& text, const std::string& needle)
{
  const auto at = text.find(needle);
  if (at == std::string::npos) throw std::logic_error("line_of: '" + needle + "' not in the deck");
  return 1 + int(std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n'));
}

// The message of the InputError that read() throws for the deck `text` ("" and a test failure if none).
template <class Read>
std::string input_error_of(const std::string& text, Read&& read)
{
  try {
    read();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for the deck:\n" << text;
  return "";
}

// An InputError message `msg` starts with "<file>:<line>:", names `key` (": key: ") and is one line.
inline void expect_error_message(const std::string& msg, const std::string& file, int line, const std::string& key)
{
  const std::string where = file + ":" + std::to_string(line) + ":";
  EXPECT_EQ(msg.rfind(where, 0), 0u) << "expected the message to start with '" << where << "': " << msg;
  EXPECT_NE(msg.find(": " + key + ": "), std::string::npos) << "expected key '" << key << "' in: " << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "message is not one line: " << msg;
}

}  // namespace blockres::test_deck
