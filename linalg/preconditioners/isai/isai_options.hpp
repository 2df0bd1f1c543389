// The ISAI preconditioner's options (deck: type = "isai") and the ISAI view, which ILU(0)'s ISAI
// triangular solves share.
#pragma once

#include "input/names.hpp"
#include "linalg/executor.hpp"

#include <memory>
#include <string_view>

namespace blockres::deck {
class Section;  // input/section.hpp
}

namespace blockres {

class Preconditioner;

// How an ISAI is generated and stored (kernels/ilu_isai/isai.hpp, kernels/ilu_isai/isai_block.hpp).
// Both give the same M (the ISAI pattern of a BSR matrix is the scalar expansion of its block
// pattern):
//   scalar  one small system per scalar column, M stored as CSR (a bs = 1 BSR matrix);
//   block   one system with bs right-hand sides per block column, M stored as BSR with A's
//           block size (applied by the BSR SpMV).
enum class IsaiView { scalar, block };
inline constexpr auto isai_view_names =
    name_table<IsaiView>({{IsaiView::scalar, "scalar"}, {IsaiView::block, "block"}});
constexpr std::string_view to_string(IsaiView v) { return isai_view_names.name(v); }

constexpr int max_isai_power = 3;  // pattern S(|T|^k), k = 1..max_isai_power

// General ISAI of A itself (linalg/preconditioners/isai/isai_preconditioner.hpp): M ~ A^{-1} on the
// pattern S(|A|^k).
struct IsaiOptions {
  int power = 1;  // 1..max_isai_power
  IsaiView view = IsaiView::block;
  bool operator==(const IsaiOptions&) const = default;
};
inline constexpr std::string_view isai_keys[] = {"isai_power", "isai_view"};
IsaiOptions read(deck::Section& table, const IsaiOptions& defaults);
std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const IsaiOptions& opt);

}  // namespace blockres
