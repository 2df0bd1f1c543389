// Global dot products and norms of vectors distributed by owned rows (issue 33): the local kernel of vector_ops,
// then the communicator's ordered sum, so every rank gets the same bits and one rank gets vector_ops' own result.
// (The Krylov methods move onto these in the next increment, each fused form with one sum per pass.)
#pragma once

#include "linalg/distributed/communicator.hpp"
#include "linalg/vector_ops.hpp"

#include <cmath>

namespace blockres::dist {

inline double dot(const Communicator& comm, const Vector& x, const Vector& y) { return comm.sum(blockres::dot(x, y)); }
inline double norm2(const Communicator& comm, const Vector& x) { return std::sqrt(dot(comm, x, x)); }
// out[j] = xs[j] . y for j < k, one sum of k values.
inline void dots(const Communicator& comm, const Vector* const* xs, int k, const Vector& y, double* out)
{
  blockres::dots(xs, k, y, out);
  comm.sum(std::span<double>(out, static_cast<std::size_t>(k)));
}

}  // namespace blockres::dist
