// The benches' one table of preconditioner presets: each label is a snippet of the deck's own
// [solver.linear.preconditioner] keys, read through the registry's deck reader, so that a label means
// one thing in every bench and the text a report shows can be pasted into a deck.
#pragma once

#include "linalg/preconditioners/isai/isai_options.hpp"
#include "linalg/preconditioners/registry.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace blockres {
struct RunConfig;  // miniapp/io/config.hpp
}

namespace blockres::bench {

// A label and its keys, written as the inside of a TOML inline table: type = "ilu0", trisolve = "isai".
struct PreconditionerPreset {
  std::string_view label;
  std::string_view snippet;
};

// none, jacobi, block_jacobi, block_jacobi_lu, ilu0, ilu0_isai, bilu0, bilu0_isai, isai (the table is in
// preconditioner_presets.cpp).
std::span<const PreconditionerPreset> preconditioner_presets();
std::vector<std::string> preconditioner_preset_labels();
// "none, jacobi, ...": the labels as the help texts and messages list them.
std::string preconditioner_preset_list();

// A preconditioner as a bench builds and reports it.
struct BenchPreconditioner {
  std::string label;  // a preset's label, "deck", or the name of a generated variant (bench isai)
  // The keys the deck reader applied, defaults filled in, on one line (type first): what to paste into a
  // deck's [solver.linear.preconditioner] table (one key per line) to run the same preconditioner.
  std::string toml;
  PreconditionerSpec spec;
};

// `snippet` read as a deck's [solver.linear.preconditioner] table (read_preconditioner with the deck's
// defaults and role), so defaults and validation are the deck's. A bad snippet is an InputError naming
// the label and the key.
BenchPreconditioner read_bench_preconditioner(std::string label, std::string_view snippet);
// The preset of that label; an unknown label is an InputError listing the labels.
BenchPreconditioner preconditioner_preset(std::string_view label);
// bench model's "deck": the deck's own preconditioner (cfg.linear.preconditioner), its text taken from
// the resolved deck.
BenchPreconditioner deck_preconditioner(const RunConfig& cfg);

// bench isai's generated variants, as snippets: ILU(0) with the ISAI(power) of both factors in `view`, and
// the general ISAI(power) of A in `view`.
std::string ilu0_isai_snippet(int power, IsaiView view);
std::string isai_snippet(int power, IsaiView view);

// Whether M is symmetric whenever A is (what CG's theory needs), from the spec: none, jacobi, block_jacobi
// (each diagonal block of a symmetric A is symmetric, and so is its inverse, whatever the factorisation)
// and ILU(0) with exact triangular solves of the exact factors (A = L D L^T, scalar or block) are; ILU(0)
// with ISAI solves or iterative factors (factor_sweeps > 0), the general ISAI, AMG and CPR are not claimed.
bool symmetric_preconditioner(const PreconditionerSpec& spec);

}  // namespace blockres::bench
