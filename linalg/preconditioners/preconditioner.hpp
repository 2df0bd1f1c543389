// Preconditioner interface (setup per matrix values, apply per Krylov iteration) and the
// first implementations: identity and block-Jacobi on the BSR diagonal blocks.
#pragma once

#include "linalg/bsr_matrix.hpp"
#include "kernels/batched/batched.hpp"
#include "linalg/preconditioners/amg/amg_options.hpp"
#include "linalg/vector_ops.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
  // True when apply() is a copy: the solvers then use r itself and skip the copy.
  virtual bool is_identity() const { return false; }
  // Seconds spent in the parts of setup and apply since construction, for preconditioners made of
  // parts (CPR: weights, each stage's setup and apply); empty for the others. Waits for the work
  // queued so far.
  struct ProfileEntry {
    std::string part;
    double seconds = 0.0;
  };
  virtual std::vector<ProfileEntry> profile() const { return {}; }
};

class IdentityPreconditioner final : public Preconditioner {
 public:
  SetupStatus setup(const BsrMatrix&) override { return {}; }
  void apply(const Vector& r, Vector& z) const override { copy(r, z); }
  std::string name() const override { return "none"; }
  bool is_identity() const override { return true; }
};

// How block-Jacobi factors its blocks (kernels/batched/batched_gh.hpp, kernels/batched/batched_lu.hpp):
//   gauss_jordan   explicit inverse (BGJE), applied as a block-diagonal matrix-vector product;
//   gauss_huard    Gauss–Huard factors as decomposed (BGH), applied by a combined triangular solve;
//   gauss_huard_t  the same with the upper factor stored transposed (BGHT, coalesced application);
//   lu             LU with partial pivoting and triangular solves (blocks up to 512).
//   automatic      gauss_jordan while the largest Jacobi block has at most 32 rows, lu above.
// The Gauss variants take blocks up to 32 rows.
enum class BlockFactorization { gauss_jordan, gauss_huard, gauss_huard_t, lu, automatic };
std::string_view to_string(BlockFactorization f);
int max_block_rows(BlockFactorization f);  // 32 or 512

struct BlockJacobiOptions {
  BlockFactorization factorization = BlockFactorization::automatic;
  // Scalar rows per Jacobi block. 1: point (scalar) Jacobi on the diagonal entries. 0 or up to
  // the BSR block size: the natural blocks A_rr. Larger: consecutive block rows are
  // agglomerated while the block stays within this size and each added row is coupled to the
  // block (has an entry in one of its columns).
  int max_block_size = 0;
};

// M = blockdiag(D_g) over the Jacobi blocks D_g. The symbolic part (grouping, extraction map,
// storage) runs once per matrix structure; the numeric part (extract, factor) on every setup.
// A block whose factorisation fails (info != 0, kernels/batched/batched.hpp) fails the setup with a
// message naming it; nothing is applied silently.
class BlockJacobiPreconditioner final : public Preconditioner {
 public:
  explicit BlockJacobiPreconditioner(ExecPtr exec, BlockJacobiOptions opt = {});
  SetupStatus setup(const BsrMatrix& A) override;
  void apply(const Vector& r, Vector& z) const override;
  std::string name() const override;

  index_t num_blocks() const { return layout_.count; }
  int largest_block() const { return layout_.max_size; }
  // First scalar row of every Jacobi block and one past the last (num_blocks() + 1 entries).
  std::vector<index_t> block_offsets() const;

 private:
  void symbolic(const BsrMatrix& A);

  ExecPtr exec_;
  BlockJacobiOptions opt_;
  std::uint64_t pattern_key_ = 0;  // BsrMatrix::pattern_id() of the last symbolic setup
  index_t nrows_ = 0;
  index_t nnzb_ = -1;
  int bs_ = 0;
  enum class Mode { scalar, natural, agglomerated } mode_ = Mode::natural;
  BlockFactorization fact_;  // opt_.factorization, with automatic resolved by the first setup
  kernels::BatchLayout layout_;
  Array<index_t> row_off_;
  Array<size64_t> mat_off_;
  Array<index_t> src_;        // extraction map: BSR block position ...
  Array<size64_t> dst_off_;   // ... to the offset of its (0, 0) entry in factors_
  Array<int> ld_;             // ... with that Jacobi block's leading dimension
  Array<double> factors_;
  Array<index_t> piv_;
  Array<int> info_;
  Array<index_t> counter_;
};

// ILU(0) (linalg/preconditioners/ilu0/ilu_preconditioner.hpp): how its triangular factors are applied.
enum class TriangularSolve { exact, isai };
std::string_view to_string(TriangularSolve t);

// How an ISAI is generated and stored (kernels/ilu_isai/isai.hpp, kernels/ilu_isai/isai_block.hpp). Both give the
// same M (the ISAI pattern of a BSR matrix is the scalar expansion of its block pattern):
//   scalar  one small system per scalar column, M stored as CSR (a bs = 1 BSR matrix);
//   block   one system with bs right-hand sides per block column, M stored as BSR with A's
//           block size (applied by the BSR SpMV).
enum class IsaiView { scalar, block };
std::string_view to_string(IsaiView v);

// Where ILU(0) factors (linalg/preconditioners/ilu0/ilu_preconditioner.hpp, linalg/preconditioners/ilu0/block_ilu_preconditioner.hpp):
//   scalar  scalar ILU(0) of the CSR expansion of A (every block entry one CSR entry; needs the
//           expansion's index arrays, so at most 2^31 - 1 scalar entries);
//   block   block ILU(0) on A's BSR block pattern: bs x bs block operations, factors in A's BSR
//           storage plus the inverses of the diagonal blocks, any block size. trisolve = isai
//           then needs view = block and sweeps = 0.
enum class IluFactorView { scalar, block };
std::string_view to_string(IluFactorView v);

struct Ilu0Options {
  TriangularSolve trisolve = TriangularSolve::exact;
  int isai_power = 1;  // pattern S(|L|^k), S(|U|^k), k = 1..max_isai_power
  // Fixed-point sweeps per triangular factor after the ISAI product (isai only):
  //   x <- x + M (b - T x), which moves x toward the exact solve T^{-1} b.
  int sweeps = 0;
  IsaiView view = IsaiView::scalar;  // isai only
  IluFactorView factor_view = IluFactorView::scalar;
  // factor_view = block only: 0 the exact level-scheduled factorisation; k >= 1 the iterative
  // block ILU(0) with k Jacobi sweeps (kernels/ilu_isai/ilu_block.hpp), one launch per sweep instead of one
  // per level, factors that approximate the exact ones.
  int factor_sweeps = 0;
};
constexpr int max_factor_sweeps = 64;
constexpr int max_isai_power = 3;
constexpr int max_isai_sweeps = 16;

// General ISAI of A itself (linalg/preconditioners/isai/isai_preconditioner.hpp): M ~ A^{-1} on the pattern S(|A|^k).
struct IsaiOptions {
  int power = 1;  // 1..max_isai_power
  IsaiView view = IsaiView::block;
};

enum class PreconditionerType { none, block_jacobi, ilu0, isai, amg, cpr };

// The options of every preconditioner that can be a stage of CPR (everything but CPR itself).
struct BasicPreconditionerOptions {
  BlockJacobiOptions block_jacobi;
  Ilu0Options ilu0;
  IsaiOptions isai;
  AmgOptions amg;  // bs = 1 matrices only (a CPR pressure stage, or a scalar system)
};

// CPR (linalg/preconditioners/cpr/cpr_preconditioner.hpp): decoupling weights and the two stages.
//   quasi_impes  w_i = D_ii^{-T} e_0 from the diagonal blocks, on the executor every setup;
//   true_impes   w_i = C_i^{-T} e_0 from the accumulation blocks C_i = d(accumulation_i)/d(u_i)
//                that the model provides (CprPreconditioner::set_accumulation_blocks,
//                physics::Model::accumulation_blocks), on the executor every setup;
//   external     weights supplied by CprPreconditioner::set_weights.
// Both IMPES variants are scaled to max |w_i| = 1.
enum class CprWeights { quasi_impes, true_impes, external };
std::string_view to_string(CprWeights w);

struct CprStageOptions {
  PreconditionerType type = PreconditionerType::ilu0;  // any type but cpr
  BasicPreconditionerOptions options;
};

struct CprOptions {
  CprWeights weights = CprWeights::quasi_impes;
  CprStageOptions pressure;  // stage 1, on the bs = 1 pressure matrix (default ILU(0))
  CprStageOptions second = {PreconditionerType::ilu0, {{}, {.factor_view = IluFactorView::block}, {}, {}}};  // stage 2
};

struct PreconditionerOptions : BasicPreconditionerOptions {
  CprOptions cpr;
};
std::unique_ptr<Preconditioner> make_preconditioner(PreconditionerType type, ExecPtr exec,
                                                    const PreconditionerOptions& opt = {});

}  // namespace blockres
