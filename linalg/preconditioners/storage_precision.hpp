// The storage precision of a preconditioner's matrices (issue 30, mixed precision), one enum and one
// deck spelling (`storage = "fp64" | "fp32"`) for every preconditioner that offers it: the AMG's
// levels and transfer operators, block-Jacobi's explicit inverses, block ILU(0)'s factors and their ISAI. fp32 keeps fp32 copies of the
// matrices the application reads; the application computes in fp64 with fp64 vectors, and the setup
// (factorisations, Galerkin products, checks) stays fp64.
#pragma once

#include "input/names.hpp"

#include <string_view>

namespace blockres {

enum class StoragePrecision { fp64, fp32 };
inline constexpr auto storage_precision_names =
    name_table<StoragePrecision>({{StoragePrecision::fp64, "fp64"}, {StoragePrecision::fp32, "fp32"}});
constexpr std::string_view to_string(StoragePrecision s) { return storage_precision_names.name(s); }

}  // namespace blockres
