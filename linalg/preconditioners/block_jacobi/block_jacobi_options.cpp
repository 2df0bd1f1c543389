// Block-Jacobi and point Jacobi from a deck table, and made from their options.
#include "linalg/preconditioners/block_jacobi/block_jacobi_options.hpp"

#include "input/section.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi.hpp"

namespace blockres {

BlockJacobiOptions read(deck::Section& p, const BlockJacobiOptions& defaults)
{
  BlockJacobiOptions o = defaults;
  o.factorization = p.choice("factorization", defaults.factorization, block_factorization_names);
  o.max_block_size =
      p.integer("max_block_size", defaults.max_block_size, deck::between(0, max_block_rows(o.factorization)));
  return o;
}

std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const BlockJacobiOptions& opt)
{
  return std::make_unique<BlockJacobiPreconditioner>(std::move(exec), opt);
}

JacobiOptions read(deck::Section&, const JacobiOptions& defaults) { return defaults; }

std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const JacobiOptions&)
{
  return std::make_unique<BlockJacobiPreconditioner>(std::move(exec), BlockJacobiOptions{.max_block_size = 1});
}

}  // namespace blockres
