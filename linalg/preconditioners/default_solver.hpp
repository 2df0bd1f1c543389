// The default linear solver: the one place that says which Krylov method, limits and preconditioner a
// deck gets when its [solver.linear] leaves them out, as a function of the linear system the model
// makes (block size, pressure unknown, compressibility); and the one-line description of any choice.
#pragma once

#include "linalg/krylov.hpp"
#include "linalg/preconditioners/registry.hpp"

#include <string>
#include <string_view>

namespace blockres {

// What the default is chosen from: what the model's registry entry says of the system a deck makes
// (physics/model_registry.hpp), known before the deck's [solver] is read.
struct LinearSystemTraits {
  int block_size = 1;             // unknowns (and equations) per cell
  bool pressure_unknown = false;  // unknown 0 of every cell is a pressure: CPR applies
  // Some rock or fluid compressibility: the accumulation blocks have a pressure column, so the
  // true-IMPES weights exist (without it every accumulation block is singular and CPR's setup fails).
  bool compressible = false;
  // Active cells of the grid (the deck's, before any decomposition): with block_size, the system's
  // unknowns, which decide the second stage (default_ilu_max_unknowns). 0: unknown (taken as small).
  long long cells = 0;
  long long unknowns() const { return cells * block_size; }
};

// The default's table (kept small and commented in default_solver.cpp; the measurements behind it are
// in inputs/README.md, "Default linear solver"): the second stage is block ILU(0) with ISAI
// triangular solves up to this block size and this many unknowns (cells x block size), block-Jacobi
// beyond either.
inline constexpr int default_ilu_max_block_size = 8;
inline constexpr long long default_ilu_max_unknowns = 160000;
// The default CPR's AMG keeps its hierarchy within a time step until a solve needs this much more
// (AmgOptions::refresh_growth); its matrices are stored in fp32 (AmgOptions::storage).
inline constexpr double default_amg_refresh_growth = 0.3;
// The default CPR's AMG damps its Jacobi smoother by this weight (AmgOptions::jacobi_omega; AmgOptions'
// own 2/3 is the 1-D optimum, 6/7 the 3-D one for the 7-point Laplacian).
inline constexpr double default_amg_jacobi_omega = 0.85;

struct DefaultLinearSolver {
  // method, restart (or idr_s), max_iterations and rel_tol (the fixed forcing term); the other
  // fields keep KrylovConfig's values.
  KrylovConfig krylov;
  // > 0: inexact Newton by default, Eisenstat–Walker forcing with this largest term (where a deck gives
  // no `tolerance`: one that does keeps the fixed krylov.rel_tol); 0: the fixed rel_tol.
  double eta_max = 0.0;
  PreconditionerSpec preconditioner;
  std::string description;  // describe_linear_solver(krylov, preconditioner)
  std::string reason;       // one line: why this choice for these traits
};

// The default for a system with these traits. Throws std::invalid_argument for a block size
// outside 1..64 (the range every preconditioner takes).
DefaultLinearSolver default_linear_solver(const LinearSystemTraits& traits);

// One line naming a solver and its preconditioner for people: "FGMRES(30) + CPR(true_impes; pressure:
// AMG; second stage: block ILU(0)/ISAI)", "BiCGSTAB + block-Jacobi", "IDR(4) + ILU(0)/ISAI".
std::string describe_linear_solver(const KrylovConfig& krylov, const PreconditionerSpec& preconditioner);
// The preconditioner part of that line: "block ILU(0)/ISAI", "CPR(...)", "AMG".
std::string describe_preconditioner(const PreconditionerSpec& preconditioner);

}  // namespace blockres
