// ILU(0)'s options (deck: type = "ilu0"): where it factors (scalar or block view), how its
// triangular factors are applied (exact or ISAI), and the choices of each.
#pragma once

#include "input/names.hpp"
#include "linalg/executor.hpp"
#include "linalg/preconditioners/isai/isai_options.hpp"
#include "linalg/preconditioners/storage_precision.hpp"

#include <memory>
#include <string_view>

namespace blockres::deck {
class Section;  // input/section.hpp
}

namespace blockres {

class Preconditioner;

// How ILU(0)'s triangular factors are applied: level-scheduled exact solves, or the ISAI of each
// factor as a sparse matrix-vector product.
enum class TriangularSolve { exact, isai };
inline constexpr auto triangular_solve_names =
    name_table<TriangularSolve>({{TriangularSolve::exact, "exact"}, {TriangularSolve::isai, "isai"}});
constexpr std::string_view to_string(TriangularSolve t) { return triangular_solve_names.name(t); }

// Where ILU(0) factors (linalg/preconditioners/ilu0/ilu_preconditioner.hpp, block_ilu_preconditioner.hpp):
//   scalar  scalar ILU(0) of the CSR expansion of A (every block entry one CSR entry; needs the
//           expansion's index arrays, so at most 2^31 - 1 scalar entries);
//   block   block ILU(0) on A's BSR block pattern: bs x bs block operations, factors in A's BSR
//           storage plus the inverses of the diagonal blocks, any block size. trisolve = isai
//           then needs view = block (sweeps as in the scalar view).
enum class IluFactorView { scalar, block };
inline constexpr auto ilu_factor_view_names =
    name_table<IluFactorView>({{IluFactorView::scalar, "scalar"}, {IluFactorView::block, "block"}});
constexpr std::string_view to_string(IluFactorView v) { return ilu_factor_view_names.name(v); }

// Whose code computes the scalar-view ILU(0) on the CUDA backend (the CPU backend always runs the
// project's own; the block view has no library equivalent: cuSPARSE's bsrilu02 factors the diagonal
// blocks without pivoting, which is the scalar view's preconditioner, not the block view's):
//   automatic  cuSPARSE wherever it was measured faster (issue 31: the factorisation 1.5-12x and the
//              exact solves 1.8-2.5x at every block size measured, bench isai), the project's kernels
//              elsewhere: today cuSPARSE on CUDA for the scalar view, the project's for the block view;
//   cusparse   csrilu02 and, for trisolve = "exact", SpSV; with trisolve = "exact" at block sizes 3..8
//              bsrilu02 + bsrsv2 on the BSR storage instead (1.4-2.8x faster again there, measured at 3, 4, 6
//              and 8; slower at 2, 12 and 16) (CUDA backend, scalar view only);
//   blockres   the project's level-scheduled kernels (kernels/ilu_isai/ilu.hpp), as on the CPU.
// Both compute the same factors up to rounding; zero and non-finite pivots fail the setup alike.
enum class IluImplementation { automatic, cusparse, blockres };
inline constexpr int cusparse_bsr_min_block_size = 3, cusparse_bsr_max_block_size = 8;
inline constexpr auto ilu_implementation_names = name_table<IluImplementation>(
    {{IluImplementation::automatic, "automatic"}, {IluImplementation::cusparse, "cusparse"},
     {IluImplementation::blockres, "blockres"}});
constexpr std::string_view to_string(IluImplementation i) { return ilu_implementation_names.name(i); }

constexpr int max_factor_sweeps = 64;
constexpr int max_isai_sweeps = 16;

struct Ilu0Options {
  TriangularSolve trisolve = TriangularSolve::exact;
  int isai_power = 1;  // pattern S(|L|^k), S(|U|^k), k = 1..max_isai_power
  // Fixed-point sweeps per triangular factor after the ISAI product (isai only):
  //   x <- x + M (b - T x), which moves x toward the exact solve T^{-1} b.
  int sweeps = 0;
  IsaiView view = IsaiView::scalar;  // isai only
  IluFactorView factor_view = IluFactorView::scalar;
  // factor_view = block only: 0 the exact level-scheduled factorisation; k >= 1 the iterative
  // block ILU(0) with k Jacobi sweeps (kernels/ilu_isai/ilu_block.hpp), one launch per sweep instead
  // of one per level, factors that approximate the exact ones.
  int factor_sweeps = 0;
  // factor_view = block with trisolve = isai only (issue 30, mixed precision): fp32 copies of the
  // factors (read by the sweeps' residuals) and of both ISAI matrices, made at every setup from the
  // fp64 ones and applied in fp64 arithmetic to fp64 vectors (4 instead of 8 bytes per value).
  StoragePrecision storage = StoragePrecision::fp64;
  IluImplementation implementation = IluImplementation::automatic;
  bool operator==(const Ilu0Options&) const = default;
};
// In the order the deck reader checks that they apply.
inline constexpr std::string_view ilu0_keys[] = {"trisolve",   "sweeps",    "factor_view", "factor_sweeps",
                                                 "isai_power", "isai_view", "storage",     "implementation"};
// With factor_view = block, an ISAI triangular solve defaults to (and must have) the block view.
Ilu0Options read(deck::Section& table, const Ilu0Options& defaults);
// The scalar-view or the block-view ILU(0), by opt.factor_view.
std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const Ilu0Options& opt);

}  // namespace blockres
