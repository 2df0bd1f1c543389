// No preconditioner: nothing to read, the identity to make.
#include "linalg/preconditioners/none/none.hpp"

namespace blockres {

NoneOptions read(deck::Section&, const NoneOptions& defaults) { return defaults; }

std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr, const NoneOptions&)
{
  return std::make_unique<IdentityPreconditioner>();
}

}  // namespace blockres
