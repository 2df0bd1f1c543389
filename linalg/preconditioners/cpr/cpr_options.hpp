// CPR's options (deck: type = "cpr"): the decoupling weights and its two stages, each any registered
// preconditioner but CPR itself.
#pragma once

#include "input/names.hpp"
#include "linalg/executor.hpp"
#include "linalg/preconditioners/amg/amg_options.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi_options.hpp"
#include "linalg/preconditioners/registry.hpp"

#include <memory>
#include <string_view>

namespace blockres {

// CPR's decoupling weights (linalg/preconditioners/cpr/cpr_preconditioner.hpp):
//   quasi_impes  w_i = D_ii^{-T} e_0 from the diagonal blocks, on the executor every setup;
//   true_impes   w_i = C_i^{-T} e_0 from the accumulation blocks C_i = d(accumulation_i)/d(u_i)
//                that the model provides (Preconditioner::set_accumulation_blocks,
//                physics::Model::accumulation_blocks), on the executor every setup.
// Both are scaled to max |w_i| = 1.
enum class CprWeights { quasi_impes, true_impes };
inline constexpr auto cpr_weights_names =
    name_table<CprWeights>({{CprWeights::quasi_impes, "quasi_impes"}, {CprWeights::true_impes, "true_impes"}});
constexpr std::string_view to_string(CprWeights w) { return cpr_weights_names.name(w); }

struct CprOptions {
  CprWeights weights = CprWeights::quasi_impes;
  // Measured on the H200 (issue 16): AMG for the pressure; block-Jacobi as the second stage was the
  // fastest per run (1M cells: 7.7 s against 10.1 s with block ILU(0)/ISAI, whose setup costs more
  // than its fewer iterations save).
  PreconditionerSpec pressure{"amg", AmgOptions{}};             // stage 1, on the bs = 1 pressure matrix
  PreconditionerSpec second{"block_jacobi", BlockJacobiOptions{}};  // stage 2, on A
  // CUDA: the whole application (both stages, restriction, prolongation, residual update) recorded
  // once per setup and replayed as one graph launch (linalg/stream_graph.hpp); false: every kernel
  // launched on its own, each stage timed separately in the profile. No effect on the CPU.
  bool graph = true;
  bool operator==(const CprOptions&) const = default;
};
inline constexpr std::string_view cpr_keys[] = {"weights", "pressure", "second", "graph"};
// The stages are the tables `pressure` and `second`, read through the registry; a second stage of
// type ilu0 factors in the block view unless the table says otherwise.
CprOptions read(deck::Section& table, const CprOptions& defaults);
std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const CprOptions& opt);

}  // namespace blockres
