// NameTable: the one list of names of an enum's values, read for parsing (the deck's choice lists),
// for to_string and for the "must be one of" messages, so that a label means one thing everywhere.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

namespace blockres {

// The values of enum E with their names, in the order messages list them (the deck's order, which
// need not be the enum's).
template <class E, std::size_t N>
class NameTable {
 public:
  using Entry = std::pair<E, std::string_view>;

  constexpr explicit NameTable(const Entry (&entries)[N])
  {
    for (std::size_t i = 0; i < N; ++i) {
      values_[i] = entries[i].first;
      names_[i] = entries[i].second;
    }
  }

  // "?" for a value that is not in the table (a cast from a bad integer).
  constexpr std::string_view name(E v) const
  {
    for (std::size_t i = 0; i < N; ++i)
      if (values_[i] == v) return names_[i];
    return "?";
  }
  constexpr std::optional<E> find(std::string_view s) const
  {
    for (std::size_t i = 0; i < N; ++i)
      if (names_[i] == s) return values_[i];
    return std::nullopt;
  }
  constexpr std::span<const std::string_view> names() const { return names_; }
  constexpr std::span<const E> values() const { return values_; }

 private:
  std::array<E, N> values_{};
  std::array<std::string_view, N> names_{};
};

// name_table<Color>({{Color::red, "red"}, {Color::blue, "blue"}})
template <class E, std::size_t N>
constexpr NameTable<E, N> name_table(const std::pair<E, std::string_view> (&entries)[N])
{
  return NameTable<E, N>(entries);
}

}  // namespace blockres
