// `blockres bench`: verified, reproducible performance reports (JSON file + terminal table).
#pragma once

#include "linalg/preconditioners/amg/amg_options.hpp"
#include "linalg/preconditioners/isai/isai_options.hpp"
#include "miniapp/bench/baseline_limits.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace blockres {

// The options every section shares, declared once (add_bench_common_options, bench_cli.hpp, adds
// them to a section's command line); each section's struct sets its own defaults.
struct BenchCommonOptions {
  std::string json_path;  // --json: the report file
  // --strict: a missed target (printed as FAIL) fails the run, not only a failed check. A section
  // that evaluates no target (batched, isai, model) accepts it and runs the same.
  bool strict = false;
  int reps = 0;              // --reps: timed repetitions (median reported)
  int warmup = 0;            // --warmup: untimed repetitions first
  std::string command_line;  // recorded in the report
  // --tuning-cache: the CUDA kernel tuning ("" the device's default cache, "none" the built-in rule, or a
  // file written by `blockres tune`); the report records which ("tuning_source").
  std::string tuning_cache;
  // What a library baseline must fit (32-bit indices, free device memory); a matrix beyond it skips that
  // baseline and still reports ours. Not on the command line: a test lowers index_limit to meet it cheaply.
  bench::BaselineLimits baseline_limits;
};

struct BsrmvBenchOptions : BenchCommonOptions {
  BsrmvBenchOptions()
  {
    json_path = "bench_bsrmv.json";
    reps = 25;
    warmup = 5;
  }
  std::vector<int> block_sizes{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64};
  std::vector<int> stencils{7, 27};
  std::vector<int> powerlaw_block_sizes{4, 8};
  double matrix_gb = 3.0;  // block values + column indices of each stencil matrix
  std::vector<std::string> jacobians;  // HDF5 files written by `blockres run --write-jacobian`
  bool tune = false;                   // search every compiled configuration per block size
};

// Returns the process exit code (0 when every result verified against the CPU reference).
int run_bsrmv_bench(const BsrmvBenchOptions& opt, const std::function<void(const std::string&)>& log);

struct BatchedBenchOptions : BenchCommonOptions {
  BatchedBenchOptions()
  {
    json_path = "bench_batched.json";
    reps = 25;
    warmup = 5;
  }
  // Gauss–Huard, Gauss–Jordan and LU for sizes <= 32; LU only above (up to 512).
  std::vector<int> sizes{1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,  17,  18,  19,
                         20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 48, 64, 128, 256, 512};
  // A mixed batch after the uniform ones: sizes uniform in [mixed_lo, mixed_hi] (`--mixed LO..HI`;
  // `--mixed none`: mixed_lo = 0, skipped), compared with the uniform batch of its mean size.
  int mixed_lo = 9, mixed_hi = 32;
  // The mixed batch's layout carries the size index block-Jacobi gives its agglomerated blocks on CUDA
  // (one launch per size class on its own blocks, issue 31 item 3); false (`--mixed-classes off`): the
  // whole-batch launches, for comparison.
  bool mixed_classes = true;
  double batch_gb = 2.0;           // cap on the bytes of one batch of blocks (8 n^2 per block)
  long long max_blocks = 1048576;  // cap on the blocks of one batch
  // Block-Jacobi section: HDF5 files written by `blockres run --write-jacobian` (none: skipped).
  std::vector<std::string> jacobians;
  // Which sections run (`--only kernels` / `--only block-jacobi`; default both).
  bool kernels_section = true;
  bool block_jacobi_section = true;
};

// Two sections. Kernels: the batched dense kernels (kernels/batched/batched_gh.hpp,
// kernels/batched/batched_lu.hpp) against cuBLAS's getrfBatched / getrsBatched / matinvBatched.
// Block-Jacobi: BlockJacobiPreconditioner setup, apply and BiCGSTAB iterations (none, scalar,
// natural and agglomerated blocks, every factorisation) on the `jacobians`. Returns the process
// exit code (0 when every factorisation reported info 0, every residual is <= 100 n eps and
// every block-Jacobi row verified; see bench_block_jacobi.cpp).
int run_batched_bench(const BatchedBenchOptions& opt, const std::function<void(const std::string&)>& log);

struct IsaiBenchOptions : BenchCommonOptions {
  IsaiBenchOptions()
  {
    json_path = "bench_isai.json";
    reps = 10;
    warmup = 3;
  }
  std::vector<int> block_sizes{1, 2, 4, 8};  // 7-point stencil matrices, one per block size
  double matrix_gb = 0.5;                    // cap on block values + column indices of each stencil matrix
  int max_side = 120;                        // cap on the stencil grid side (120^3 = 1.73M cells)
  std::vector<int> powers{1, 2, 3};          // ISAI(k) of the ILU(0) factors
  std::vector<int> general_powers{1};        // general ISAI(k) of A
  std::vector<std::string> jacobians;        // HDF5 files written by `blockres run --write-jacobian`
  std::vector<std::string> methods{"gmres", "idr"};
  double rel_tol = 1e-6;
  int max_iterations = 3000;
  bool solve_section = true;
};

// ILU(0) with exact or ISAI triangular solves, general ISAI and block-Jacobi: setup, generation
// and application against cuSPARSE (csrilu02, bsrilu02, SpSV, bsrsv2) in the same run, and time
// to solution of GMRES / IDR(4) (bench_isai.cpp). Returns the process exit code (0 when every
// result verified).
int run_isai_bench(const IsaiBenchOptions& opt, const std::function<void(const std::string&)>& log);

struct SolverBenchOptions : BenchCommonOptions {
  // reps: timed fixed-iteration solves; warmup: untimed ones first (at least 1: workspace allocation).
  SolverBenchOptions()
  {
    json_path = "bench_solver.json";
    reps = 5;
    warmup = 1;
  }
  std::vector<int> block_sizes{1, 2, 4, 8, 16};  // 7-point stencil matrices, one per block size
  int side = 100;                                // stencil grid side (100^3 = 1M cells)
  // cg, bicgstab, gmres (GMRES(30)), fgmres (FGMRES(30)), idr (IDR(4)).
  std::vector<std::string> methods{"cg", "bicgstab", "gmres", "fgmres", "idr"};
  // Time-to-solution section: labels of the bench presets (miniapp/bench/preconditioner_presets.hpp, the
  // same as bench model's): none, jacobi (point), block_jacobi (natural blocks, automatic factorisation),
  // ilu0 (exact triangular solves), ilu0_isai (ILU(0) + ISAI(1), block view), isai (general ISAI(1)).
  std::vector<std::string> preconditioners{"none", "jacobi", "block_jacobi", "ilu0", "ilu0_isai", "isai"};
  std::vector<std::string> jacobians;  // HDF5 files written by `blockres run --write-jacobian`
  double rel_tol = 1e-6;               // time-to-solution section
  int max_iterations = 1000;           // time-to-solution section
  // Iteration-cost section: matrix-vector products per fixed-iteration solve (a multiple of 30, so
  // GMRES(30) ends a restart cycle and IDR(4) a cycle of s + 1 = 5); BiCGSTAB does iterations / 2.
  int iterations = 60;
  bool iteration_section = true;
  bool solve_section = true;
  // Fixed-iteration solves are repeated on the CPU backend (residual after the last iteration compared) on
  // matrices of at most this many GB of values and indices.
  double cpu_check_gb = 4.0;
};

// Krylov solvers on 3D 7-point block stencils and simulator Jacobians (bench_solver.cpp). Two
// sections: iteration cost (fixed-iteration unpreconditioned solves: time per iteration against the
// bytes an iteration must move at the device-to-device copy bandwidth of the same run, and the phase
// split of a profiled solve) and time to solution of every method with every preconditioner.
// Returns the process exit code (0 when every result verified; a solve that does not converge is a
// result, not a failure).
int run_solver_bench(const SolverBenchOptions& opt, const std::function<void(const std::string&)>& log);

// `blockres bench scaling` (issue 33, first part: the distributed product): one block stencil matrix split by rows over
// the ranks of the run (mpirun -np P; one GPU per rank on CUDA), the product timed on all ranks against rank 0
// alone with the whole matrix, checked against it; halo bytes and the exchange's own time. Runs on one rank too.
struct ScalingBenchOptions : BenchCommonOptions {
  ScalingBenchOptions()
  {
    json_path = "bench_scaling.json";
    reps = 20;
    warmup = 3;
  }
  std::string backend = "auto";         // auto, cpu, cuda
  std::vector<int> block_sizes{1, 4, 16};
  double matrix_gb = 0.0;               // block values + column indices of the whole matrix (0: 2 on CUDA, 0.05 on the CPU)
};
int run_scaling_bench(const ScalingBenchOptions& opt, const std::function<void(const std::string&)>& log);

struct ModelBenchOptions : BenchCommonOptions {
  // reps, warmup: timed and untimed assemblies.
  ModelBenchOptions()
  {
    json_path = "bench_model.json";
    reps = 10;
    warmup = 2;
  }
  std::string deck;                     // input deck (its model, grid and solver settings)
  std::vector<std::string> overrides;   // --set key=value
  // deck (the deck's own) or labels of the bench presets (miniapp/bench/preconditioner_presets.hpp, the
  // same as bench solver's): none, jacobi, block_jacobi (natural blocks; Gauss-Jordan up to 32, LU above),
  // block_jacobi_lu, ilu0 / ilu0_isai (scalar view), bilu0 / bilu0_isai (block ILU(0)), isai.
  std::vector<std::string> preconditioners{"deck", "block_jacobi", "bilu0", "bilu0_isai"};
  int newton_iterations = 3;            // of the first time step, from the initial state
  double rel_tol = 1e-4;                // relative tolerance of each linear solve
  double verify_gb = 4.0;               // assembly checked against the CPU when the Jacobian is at most this
};

// A deck's model on the CUDA device (bench_model.cpp): assembly throughput against the copy
// bandwidth of the same run (checked against the CPU assembly), and the first Newton iterations
// with each preconditioner: assembly, setup and solve times, linear iterations, peak device memory.
// Returns 1 when the assembly check fails, else 0 (a preconditioner that fails is a result).
int run_model_bench(const ModelBenchOptions& opt, const std::function<void(const std::string&)>& log);

struct AmgBenchOptions : BenchCommonOptions {
  // reps: full setups, numeric re-setups and solves (median reported); warmup: untimed calls first.
  AmgBenchOptions()
  {
    json_path = "bench_amg.json";
    reps = 5;
    warmup = 1;
  }
  std::string backend = "auto";  // auto (CUDA when a device is present), cpu or cuda
  std::vector<int> sizes;        // n of the n^3 grids; empty: 100, 200, 300 on CUDA, 32, 64 on the CPU
  // poisson, lognormal1, lognormal3, anisotropic (miniapp/bench/amg_bench_matrices.hpp), on every size.
  std::vector<std::string> matrices{"poisson", "lognormal1", "lognormal3", "anisotropic"};
  std::vector<std::string> decks;      // the CPR pressure matrix of each deck's first Jacobian
  std::vector<std::string> overrides;  // --set key=value, applied to every deck
  AmgOptions amg;                      // refresh_interval is forced to 1
  double rel_tol = 1e-8;
  int max_iterations = 1000;
  int apply_reps = 20;  // SpMV and V-cycle (median reported)
  bool hypre = true;                    // when built with hypre
  long long hypre_max_rows = 1100000;   // hypre (serial, CPU) only on matrices up to this many rows
  std::uint64_t seed = 1;
  double copy_mb = 1024;  // each of the two buffers of the copy-bandwidth measurement
};

// Aggregation AMG (linalg/preconditioners/amg/amg.hpp) on 7-point Poisson, heterogeneous pressure matrices and deck
// pressure matrices (bench_amg.cpp), on the CPU or CUDA backend: full and numeric setup, V-cycle (seconds,
// SpMV-equivalents, fraction of the copy bandwidth), hierarchy, AMG-preconditioned CG, and hypre BoomerAMG
// on the CPU as the quality peer when built in. Returns the process exit code (0 when every check passed).
int run_amg_bench(const AmgBenchOptions& opt, const std::function<void(const std::string&)>& log);

}  // namespace blockres
