// No preconditioner (deck: type = "none"): M = I, which the solvers skip.
#pragma once

#include "linalg/executor.hpp"
#include "linalg/preconditioners/preconditioner.hpp"

#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace blockres::deck {
class Section;  // input/section.hpp
}

namespace blockres {

class IdentityPreconditioner final : public Preconditioner {
 public:
  SetupStatus setup(const BsrMatrix&) override { return {}; }
  void apply(const Vector& r, Vector& z) const override { copy(r, z); }
  std::string name() const override { return "none"; }
  bool is_identity() const override { return true; }
};

struct NoneOptions {
  bool operator==(const NoneOptions&) const = default;
};
inline constexpr std::span<const std::string_view> none_keys{};
NoneOptions read(deck::Section& table, const NoneOptions& defaults);
std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const NoneOptions& opt);

}  // namespace blockres
