// Preconditioner interface (setup per matrix values, apply per Krylov iteration) and the
// first implementations: identity and block-Jacobi on the BSR diagonal blocks.
#pragma once

#include "linalg/bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"

#include <memory>
#include <string>

namespace blockres {

struct SetupStatus {
  bool ok = true;
  std::string message;  // why setup failed (e.g. singular diagonal blocks), empty when ok
};

class Preconditioner {
 public:
  virtual ~Preconditioner() = default;
  // Numeric setup for the current values of A (the structure must not change between calls).
  virtual SetupStatus setup(const BsrMatrix& A) = 0;
  // z = M^{-1} r; z and r must not alias.
  virtual void apply(const Vector& r, Vector& z) const = 0;
  virtual std::string name() const = 0;
};

class IdentityPreconditioner final : public Preconditioner {
 public:
  SetupStatus setup(const BsrMatrix&) override { return {}; }
  void apply(const Vector& r, Vector& z) const override { copy(r, z); }
  std::string name() const override { return "none"; }
};

// M = blockdiag(A_rr): each diagonal block inverted by Gauss–Jordan with partial pivoting.
class BlockJacobiPreconditioner final : public Preconditioner {
 public:
  explicit BlockJacobiPreconditioner(ExecPtr exec) : exec_(std::move(exec)) {}
  SetupStatus setup(const BsrMatrix& A) override;
  void apply(const Vector& r, Vector& z) const override;
  std::string name() const override { return "block_jacobi"; }

 private:
  ExecPtr exec_;
  index_t nrows_ = 0;
  int bs_ = 0;
  Array<double> inverse_;
  Array<int> info_;
  Array<index_t> counter_;
};

enum class PreconditionerType { none, block_jacobi };
std::unique_ptr<Preconditioner> make_preconditioner(PreconditionerType type, ExecPtr exec);

}  // namespace blockres
