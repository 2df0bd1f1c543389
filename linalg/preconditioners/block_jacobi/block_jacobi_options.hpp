// Block-Jacobi's options and how a deck names them: the factorisation of the blocks, the block size,
// and point Jacobi (`jacobi`: block-Jacobi on the 1x1 diagonal entries, with nothing to choose).
#pragma once

#include "input/names.hpp"
#include "linalg/executor.hpp"
#include "linalg/preconditioners/storage_precision.hpp"

#include <memory>
#include <span>
#include <string_view>

namespace blockres::deck {
class Section;  // input/section.hpp
}

namespace blockres {

class Preconditioner;

// How block-Jacobi factors its blocks (kernels/batched/batched_gh.hpp, kernels/batched/batched_lu.hpp):
//   gauss_jordan   explicit inverse (BGJE), applied as a block-diagonal matrix-vector product;
//   gauss_huard    Gauss–Huard factors as decomposed (BGH), applied by a combined triangular solve;
//   gauss_huard_t  the same with the upper factor stored transposed (BGHT, coalesced application);
//   lu             LU with partial pivoting and triangular solves (blocks up to 512).
//   automatic      gauss_jordan while the largest Jacobi block has at most 32 rows, lu above.
// The Gauss variants take blocks up to 32 rows.
enum class BlockFactorization { gauss_jordan, gauss_huard, gauss_huard_t, lu, automatic };
inline constexpr auto block_factorization_names = name_table<BlockFactorization>({
    {BlockFactorization::automatic, "automatic"},
    {BlockFactorization::gauss_jordan, "gauss_jordan"},
    {BlockFactorization::gauss_huard, "gauss_huard"},
    {BlockFactorization::gauss_huard_t, "gauss_huard_t"},
    {BlockFactorization::lu, "lu"},
});
constexpr std::string_view to_string(BlockFactorization f) { return block_factorization_names.name(f); }
int max_block_rows(BlockFactorization f);  // 32 or 512

struct BlockJacobiOptions {
  BlockFactorization factorization = BlockFactorization::automatic;
  // Scalar rows per Jacobi block. 1: point (scalar) Jacobi on the diagonal entries. 0 or up to
  // the BSR block size: the natural blocks A_rr. Larger: consecutive block rows are
  // agglomerated while the block stays within this size and each added row is coupled to the
  // block (has an entry in one of its columns).
  int max_block_size = 0;
  // The explicit inverses in fp64 or fp32 (linalg/preconditioners/storage_precision.hpp): fp32 halves
  // the bytes of each application's inverses (computed in fp64, then rounded); Gauss–Jordan only
  // (factorization "gauss_jordan", or "automatic" with blocks of at most 32 rows).
  StoragePrecision storage = StoragePrecision::fp64;
  bool operator==(const BlockJacobiOptions&) const = default;
};
inline constexpr std::string_view block_jacobi_keys[] = {"factorization", "max_block_size", "storage"};
BlockJacobiOptions read(deck::Section& table, const BlockJacobiOptions& defaults);
std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const BlockJacobiOptions& opt);

// Point Jacobi: block-Jacobi with max_block_size = 1 and the automatic factorisation; no keys.
struct JacobiOptions {
  bool operator==(const JacobiOptions&) const = default;
};
inline constexpr std::span<const std::string_view> jacobi_keys{};
JacobiOptions read(deck::Section& table, const JacobiOptions& defaults);
std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const JacobiOptions& opt);

}  // namespace blockres
