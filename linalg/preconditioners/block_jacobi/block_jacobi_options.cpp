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
  o.storage = p.choice("storage", defaults.storage, storage_precision_names);
  const bool inverses = o.factorization == BlockFactorization::gauss_jordan ||
                        o.factorization == BlockFactorization::automatic;
  if (o.storage == StoragePrecision::fp32 && !inverses) {  // blame the key the user wrote
    if (p.given("storage"))
      p.bad(p.require("storage"), "storage",
            "fp32 stores explicit inverses: it needs factorization = \"gauss_jordan\" or \"automatic\"");
    p.bad(p.require("factorization"), "factorization", "storage = \"fp32\" needs \"gauss_jordan\" or \"automatic\"");
  }
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
