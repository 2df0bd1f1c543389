// `blockres bench isai`: ILU(0) with exact triangular solves against ILU(0) with ISAI triangular
// factors (scalar and block view, k = 1..3), the general ISAI of A, and block-Jacobi, on 3D
// 7-point block matrices and on simulator Jacobians; cuSPARSE csrilu02 / bsrilu02 / SpSV / bsrsv2
// measured in the same run as the baselines. Two sections:
//  - kernels: ILU(0) setup, ISAI generation (overhead as % of the ILU(0) setup), preconditioner
//    application (speedup of the ISAI products over the exact solves), every result checked
//    against cuSPARSE's or the CPU reference;
//  - solve: time to solution (numeric setup + Krylov solve) of GMRES(30) and IDR(4) with each
//    preconditioner, the residual recomputed.
#include "miniapp/bench/bench.hpp"

#include "kernels/spmv/bsr_to_csr.hpp"
#include "kernels/spmv/bsrmv.hpp"
#include "kernels/ilu_isai/isai.hpp"
#include "kernels/ilu_isai/isai_block.hpp"
#include "linalg/preconditioners/ilu0/ilu_preconditioner.hpp"
#include "linalg/preconditioners/isai/isai_preconditioner.hpp"
#include "linalg/preconditioners/none/none.hpp"
#include "linalg/preconditioners/registry.hpp"
#include "linalg/krylov.hpp"
#include "linalg/vector_ops.hpp"
#include "miniapp/bench/bench_common.hpp"
#include "miniapp/bench/bench_ilu_cusparse.hpp"
#include "miniapp/bench/preconditioner_presets.hpp"
#include "miniapp/io/tuning_cache.hpp"
#include "miniapp/io/version.hpp"
#include "miniapp/run/backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace blockres {

namespace {

using benchutil::Ceilings;
using benchutil::ms;
using benchutil::nan_v;
using benchutil::TestMatrix;
using benchutil::Timing;
using benchutil::time_on_stream;

constexpr std::uint64_t rhs_seed = 4242;
constexpr double ilu_tol = 1e-10;       // our factors / solves against cuSPARSE's (normwise relative)
constexpr double isai_tol = 1e-11;      // GPU ISAI values against the CPU reference (normwise relative)
constexpr double residual_slack = 10;   // a converged solve fails when its true residual > 10 rel_tol
// Every ISAI application (a product of sparse matrices) against the CPU product of the same matrices,
// componentwise: |z_gpu - z_cpu|_i / (|M_U| |M_L| |b|)_i, held against both sides' rounding bound
// 2 (n_L + n_U) eps, n the longest row (scalar entries); a normwise 1e-12 was tripped by rounding alone
// on the Jacobians (1e-12 to 3e-12).
constexpr double exact_agree_tol = 1e-8;  // a cuSPARSE triangular solve counts as exact when it agrees with ours

constexpr const char* matrix_text =
    "stencil7 bs B: 3D 7-point stencil on an s x s x s grid (cells x fastest) with B x B blocks, s = min(max_side, "
    "cbrt(size_gb / (7 (8 B^2 + 4)))); a nonsymmetric convection-diffusion-like matrix: the block to the x-1 (x+1) "
    "neighbour is -(1 + 0.5) I (-(1 - 0.5) I), to the y and z neighbours -I, each plus 0.05 |coefficient| R with R "
    "uniform in [-1, 1) (seed 2026); the diagonal block is d I + 0.1 R' (R' zero on the diagonal), d = 6 (1 + 0.05 "
    "B) + 0.1 B + 0.05, so every row is diagonally dominant by at least 0.05. Jacobians: files written by 'blockres "
    "run DECK --write-jacobian FILE', values as stored.";
constexpr const char* timing_text =
    "CUDA events on the executor's stream, median / min / max of --reps calls after --warmup untimed ones, no L2 "
    "scrub. ilu0 setup (ours): Ilu0Preconditioner::setup with exact solves and implementation = \"blockres\" (the "
    "project's kernels) after its first (symbolic) call: BSR -> CSR expansion, level-scheduled factorisation, one "
    "device->host copy of the pivot status. ilu0 setup (automatic): the same with the ilu0 preset as a deck gets "
    "it (implementation = \"automatic\": cuSPARSE csrilu02 on CUDA since issue 31, plus the pivot check and the "
    "same device->host copy), its apply the SpSV solves. csrilu02 / bsrilu02: "
    "the numeric factorisation alone (analysis done once, the values restored before each call outside the "
    "events). isai generation: Ilu0Preconditioner::regenerate_isai (both factors' M from the current factors, no "
    "synchronisation inside); overhead = generation / ilu0 setup (automatic). general isai setup: "
    "IsaiPreconditioner::setup (scalar view: plus the BSR -> CSR expansion; one device->host copy of the status). "
    "apply: Preconditioner::apply (z = M^{-1} r); cuSPARSE: SpSV (CSR) or bsrsv2 (BSR) with L then U on "
    "cuSPARSE's own factors (analysis once). first_ms: the first setup (symbolic + numeric) on the host clock. The "
    "checked outputs (our factors, the ISAI matrices, every apply's z) are poisoned (NaN) before the last timed call, "
    "so each check reads that call's result. Ratios: cuSPARSE and automatic / ours (the project's kernels); ISAI "
    "generation / the automatic ILU(0) setup and / the fastest cuSPARSE "
    "ILU(0) factorisation (csrilu02, bsrilu02); ISAI application against the fastest exact triangular solve measured "
    "(ours, SpSV on csrilu02's factors, bsrsv2 on bsrilu02's; a cuSPARSE solve counts only when its z agrees with "
    "ours to 1e-8).";
constexpr const char* byte_text =
    "apply bytes: for each of M_L and M_U one SpMV: values (8 B) and column indices (4 B) of every stored entry (CSR) "
    "or block (8 B^2 + 4 per block, BSR), row pointers, x read and y written (16 B per scalar row); %copy = bytes / time / "
    "device-to-device copy bandwidth (read + write) of this run, %read = the same / the read-only stream bandwidth "
    "(stream_sum) of this run; a row whose bytes fit in L2 is labelled L2: with no L2 scrub between calls it measures "
    "cache, not memory, bandwidth.";
constexpr const char* solve_text =
    "A x = b, b uniform in [-1, 1) (seed 4242), x0 = 0, right preconditioning, stop at ||b - A x||_2 <= rel_tol "
    "||b||_2 (confirmed by an explicit residual) or max_iterations; GMRES(30) (classical Gram-Schmidt with "
    "re-orthogonalisation) and IDR(4). time_ms = numeric setup (one call after the symbolic one; the first call is "
    "reported as first_ms) + one solve; one solver per method and matrix, its workspace and IDR's shadow space set "
    "up before the timed solves by a 2-iteration solve, as in a Newton loop. iterations: "
    "preconditioned matrix-vector products. Preconditioners: the bench presets block_jacobi and ilu0, ILU(0) + "
    "ISAI(k) and the general ISAI(k), each a set of the deck's [solver.linear.preconditioner] keys read as a deck "
    "is (each row's preconditioner_toml), and cuSPARSE's ILU(0) with SpSV solves (cusparse_ilu0).";
constexpr const char* verification_text =
    "kernels: our ILU(0) factors against csrilu02's and the automatic ones, and our exact application against "
    "SpSV's and the automatic one on the same "
    "right-hand side, normwise relative difference <= 1e-10 (bsrilu02 / bsrsv2 reported for information); every "
    "ISAI matrix generated on the GPU against its CPU reference (kernels::cpu::isai_generate or "
    "isai_block_generate on the same factors / values), normwise relative difference <= 1e-11; every ISAI "
    "application z against the CPU product of the downloaded ISAI matrices (M_U (M_L b), or M b), componentwise: "
    "|z - z_cpu|_i / (|M_U| |M_L| |b|)_i <= 2 (n_L + n_U) eps (n: longest row), both sides' rounding bound; our exact "
    "application against the CPU triangular solves with our factors, normwise <= 1e-10. solve: a row fails "
    "when it reports convergence while the recomputed relative residual exceeds 10 rel_tol, or when its "
    "preconditioner setup succeeded and the solve met NaN/Inf on a stencil matrix.";

// ---- matrices -----------------------------------------------------------------------------------
double rel_diff(const std::vector<double>& a, const std::vector<double>& b)
{
  if (a.size() != b.size()) return INFINITY;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(a[i] - b[i]);
    num = std::isnan(d) ? INFINITY : std::max(num, d);
    den = std::max(den, std::abs(b[i]));
  }
  return den > 0 ? num / den : num;
}

// ---- kernels section rows -------------------------------------------------------------------------
struct KernelRow {
  std::string matrix, op, variant;  // op: ilu0_setup, isai_generate, isai_setup, apply
  int power = 0;
  std::string view;
  size64_t nnz = 0;                  // stored entries of the ISAI matrices (0: n/a)
  double first_ms = nan_v;
  Timing t;
  double bytes = nan_v;
  double ratio = nan_v;              // see ratio_of
  std::string ratio_of;
  double ratio2 = nan_v;             // a second comparison (see ratio2_of), e.g. against cuSPARSE
  std::string ratio2_of;
  double error = nan_v, tolerance = nan_v;  // verification (nan: informational only)
  std::string toml;  // the deck keys of the preconditioner measured (empty: a cuSPARSE or SpMV row)
  std::string skipped;  // a cuSPARSE row that could not run on this matrix: why (baseline_limits.hpp)
  bool verified() const { return std::isnan(tolerance) || error <= tolerance; }
};

double achieved_gbs(const KernelRow& r)
{
  return std::isfinite(r.bytes) ? r.bytes / (r.t.median_ms * 1e-3) / 1e9 : nan_v;
}

std::string percent(double fraction)
{
  return std::isfinite(fraction) ? fmt::format("{:.0f}%", 100 * fraction) : "--";
}

std::string kernel_row_text(const KernelRow& r, const Ceilings& c)
{
  const double gbs = achieved_gbs(r);
  std::string s = fmt::format("{:<14} {:<14} {:<26} {} {} {} {} {:>6} {:>6} {:>8} {:<30} {:>9}", r.matrix, r.op,
                              r.variant, ms(r.first_ms), ms(r.t.median_ms), ms(r.t.min_ms), ms(r.t.max_ms),
                              percent(gbs / c.copy_gbs), percent(gbs / c.read_gbs),
                              std::isfinite(r.ratio) ? fmt::format("{:.2f}", r.ratio) : "--", r.ratio_of,
                              std::isfinite(r.error) ? fmt::format("{:.1e}", r.error) : "--");
  if (std::isfinite(r.ratio2)) s += fmt::format("  ({:.2f} {})", r.ratio2, r.ratio2_of);
  if (std::isfinite(r.bytes) && benchutil::fits_in_l2(r.bytes)) s += "  L2";
  if (!r.skipped.empty()) s += "  SKIPPED";
  return r.verified() ? s : s + "  VERIFICATION FAILED";
}

Json kernel_row_json(const KernelRow& r, const Ceilings& c)
{
  const double gbs = achieved_gbs(r);
  Json j = {{"matrix", r.matrix},
            {"op", r.op},
            {"variant", r.variant},
            {"preconditioner_toml", r.toml.empty() ? Json(nullptr) : Json(r.toml)},
            {"power", r.power},
            {"view", r.view},
            {"isai_nnz", r.nnz},
            {"first_ms", r.first_ms},
            {"time", timing_json(r.t)},
            {"bytes", r.bytes},
            {"fraction_of_copy_bandwidth", gbs / c.copy_gbs},
            {"fraction_of_read_bandwidth", gbs / c.read_gbs},
            {"fits_in_l2", std::isfinite(r.bytes) && benchutil::fits_in_l2(r.bytes)},
            {"ratio", r.ratio},
            {"ratio_of", r.ratio_of},
            {"ratio2", r.ratio2},
            {"ratio2_of", r.ratio2_of},
            {"error", r.error},
            {"tolerance", r.tolerance},
            {"verified", r.verified()}};
  if (!r.skipped.empty()) j["skipped"] = r.skipped;
  return j;
}

// Bytes of one SpMV with M (see byte_text).
double spmv_bytes(const BsrMatrix& M)
{
  const int bs = M.block_size();
  return double(M.nnzb()) * (8.0 * bs * bs + 4.0) + 4.0 * (M.nrows() + 1) + 16.0 * double(M.scalar_rows());
}

// The componentwise difference of an application against its CPU reference, scaled by |M| |x| chains
// (bound): max_i |got_i - ref_i| / bound_i (0/0 counts as 0, x/0 as infinite; NaN as infinite).
double componentwise_error(const std::vector<double>& got, const std::vector<double>& ref,
                           const std::vector<double>& bound)
{
  if (got.size() != ref.size() || got.size() != bound.size()) return INFINITY;
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(got[i] - ref[i]);
    if (std::isnan(d)) return INFINITY;
    if (d == 0) continue;
    worst = std::max(worst, bound[i] > 0 ? d / bound[i] : INFINITY);
  }
  return worst;
}

// Longest row of M in scalar entries (blocks x bs): the n of the rounding bound gamma_n.
double longest_row(const BsrMatrix& M)
{
  return double(M.max_row_blocks()) * M.block_size();
}

// y = M x on the host, from M's downloaded arrays (the CPU reference of an ISAI application); with
// absolute = true, |M| |x| (the rounding bound's scale).
std::vector<double> host_product(const BsrMatrix& M, const std::vector<double>& x, bool absolute);

// y = M x on the host, from M's downloaded arrays (the CPU reference of an ISAI application).
std::vector<double> host_product(const BsrMatrix& M, const std::vector<double>& x, bool absolute)
{
  const auto rp = M.row_ptr().to_host();
  const auto ci = M.col_ind().to_host();
  auto v = M.values().to_host();
  std::vector<double> ax;
  if (absolute) {
    for (auto& e : v) e = std::abs(e);
    ax.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) ax[i] = std::abs(x[i]);
  }
  std::vector<double> y(static_cast<std::size_t>(M.scalar_rows()));
  kernels::cpu::bsrmv({M.nrows(), M.ncols(), M.block_size(), rp.data(), ci.data(), v.data()}, 1.0,
                      absolute ? ax.data() : x.data(), 0.0, y.data());
  return y;
}

std::vector<double> host_product(const BsrMatrix& M, const std::vector<double>& x) { return host_product(M, x, false); }

// ILU(0) by cuSPARSE (csrilu02 on the scalar CSR expansion) applied by exact SpSV solves: the
// library baseline of the solve section (a bench-only preconditioner; the analysis runs at the
// first setup, as the symbolic part of ours does).
class CusparseIluPreconditioner final : public Preconditioner {
 public:
  explicit CusparseIluPreconditioner(const ExecPtr& e) : e_(e) {}
  SetupStatus setup(const BsrMatrix& A) override
  {
    if (!ilu_) {
      ilu_ = std::make_unique<benchutil::CusparseIlu>(A, false);
      t_ = Vector(e_, A.scalar_rows());
    }
    ilu_->load_values();
    ilu_->factor();
    SetupStatus st;
    if (const int zp = ilu_->zero_pivot(); zp >= 0) {
      st.ok = false;
      st.message = fmt::format("csrilu02: zero pivot at row {}", zp);
    }
    return st;
  }
  void apply(const Vector& r, Vector& z) const override { ilu_->solve(r, t_, z); }
  std::string name() const override { return "ilu0 cusparse (csrilu02+SpSV)"; }

 private:
  ExecPtr e_;
  std::unique_ptr<benchutil::CusparseIlu> ilu_;
  mutable Vector t_;
};

// ---- one matrix on the device -------------------------------------------------------------------------
class Problem {
 public:
  Problem(const ExecPtr& e, const TestMatrix& m, bool stencil, const IsaiBenchOptions& o)
      : e_(e), m_(m), o_(o), stencil_(stencil), A_(e, m.bs, m.pattern), b_(e, A_.scalar_rows()), x_(e, A_.scalar_rows()),
        z_(e, A_.scalar_rows()), z2_(e, A_.scalar_rows()), t_(e, A_.scalar_rows()), r_(e, A_.scalar_rows())
  {
    A_.values().copy_from_host(m.values);
    b_.copy_from_host(benchutil::random_values(A_.scalar_rows(), rhs_seed));
    b_norm_ = norm2(b_);
  }

  const BsrMatrix& A() const { return A_; }

  // Why cuSPARSE's ILU(0) (block: bsrilu02 + bsrsv2, else csrilu02 + SpSV) cannot run on this matrix now
  // (32-bit indices, its copies in the free device memory): "" when it can.
  std::string cusparse_ilu0_skip(bool block) const
  {
    std::size_t free_b = 0, total_b = 0;
    BLOCKRES_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const bench::BsrShape shape{std::uint64_t(A_.nrows()), std::uint64_t(A_.ncols()), std::uint64_t(A_.nnzb()), m_.bs};
    return bench::plan_cusparse_ilu0(shape, block, double(free_b), o_.baseline_limits).skipped;
  }

  // The kernels section for this matrix; returns its rows.
  std::vector<KernelRow> kernels(const benchutil::Log& log)
  {
    std::vector<KernelRow> rows;
    const auto s = e_->stream();
    const int W = o_.warmup, R = o_.reps;
    auto row = [&](std::string op, std::string variant) {
      KernelRow k;
      k.matrix = m_.name, k.op = std::move(op), k.variant = std::move(variant);
      return k;
    };
    auto first_setup = [&](Preconditioner& P, double& ms_out) {
      const auto t0 = std::chrono::steady_clock::now();
      const SetupStatus st = P.setup(A_);
      e_->synchronize();
      ms_out = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!st.ok) throw std::runtime_error(fmt::format("{}: {} setup failed: {}", m_.name, P.name(), st.message));
    };

    // The setup row of an ILU(0) with exact solves: first (symbolic + numeric) setup, then the timed numeric
    // ones, its CSR factors poisoned before the last timed call (the BSR form's refresh_csr_factors()
    // rewrites them from that call's factors).
    auto ilu_setup_row = [&](Ilu0Preconditioner& P, const bench::BenchPreconditioner& pc, const char* variant) {
      KernelRow k = row("ilu0_setup", variant);
      k.toml = pc.toml;
      first_setup(P, k.first_ms);
      const auto f = P.factors();
      k.t = time_on_stream(s, W, R, [&] { (void)P.setup(A_); }, [] {}, [&] {
        BLOCKRES_CUDA_CHECK(cudaMemsetAsync(const_cast<double*>(f.val), 0xff, size64_t(P.factor_nnz()) * sizeof(double), s));
      });
      P.refresh_csr_factors();
      return k;
    };

    // ILU(0) with exact solves by the project's kernels (the ilu0 preset with implementation = "blockres"):
    // setup, apply; then cuSPARSE's factor + solves against them, per block size (issue 31 item 5), and
    // the preset as a deck gets it (implementation = "automatic": cuSPARSE on CUDA since issue 31).
    const bench::BenchPreconditioner ilu0 =
        bench::read_bench_preconditioner("ilu0 (blockres kernels)", R"(type = "ilu0", implementation = "blockres")");
    Ilu0Preconditioner exact(e_, options_as<Ilu0Options>(ilu0.spec));
    KernelRow setup = ilu_setup_row(exact, ilu0, "ours");
    const auto lu = exact.factors();
    const double ours_ilu_ms = setup.t.median_ms;
    std::vector<double> lu_host(static_cast<std::size_t>(exact.factor_nnz()));
    BLOCKRES_CUDA_CHECK(cudaMemcpy(lu_host.data(), lu.val, lu_host.size() * sizeof(double), cudaMemcpyDeviceToHost));
    std::vector<index_t> lu_row_ptr(static_cast<std::size_t>(lu.n) + 1), lu_col(lu_host.size());
    BLOCKRES_CUDA_CHECK(
        cudaMemcpy(lu_row_ptr.data(), lu.row_ptr, lu_row_ptr.size() * sizeof(index_t), cudaMemcpyDeviceToHost));
    BLOCKRES_CUDA_CHECK(cudaMemcpy(lu_col.data(), lu.col, lu_col.size() * sizeof(index_t), cudaMemcpyDeviceToHost));

    auto poison_z = [&] { fill(z_, nan_v); };
    KernelRow apply_exact = row("apply", "ilu0 exact (ours)");
    apply_exact.toml = ilu0.toml;
    apply_exact.t = benchutil::time_checked(s, W, R, [&] { exact.apply(b_, z_); }, poison_z);
    const std::vector<double> z_exact = z_.to_host();
    {  // against the CPU triangular solves with our (downloaded) factors
      std::vector<double> t(z_exact.size()), z(z_exact.size());
      const auto hb = b_.to_host();
      const auto sched = kernels::ilu_schedule(lu.n, lu_row_ptr.data(), lu_col.data());
      kernels::cpu::ilu0_lower_solve(sched, {lu.n, lu_row_ptr.data(), lu_col.data(), lu_host.data()}, hb.data(),
                                     t.data());
      kernels::cpu::ilu0_upper_solve(sched, {lu.n, lu_row_ptr.data(), lu_col.data(), lu_host.data()}, t.data(),
                                     z.data());
      // Triangular solves amplify rounding with the factors' conditioning: the same normwise bound as
      // the cross-check against SpSV above.
      apply_exact.error = rel_diff(z_exact, z), apply_exact.tolerance = ilu_tol;
    }
    // The exact triangular solves measured here (ours, SpSV, bsrsv2): the ISAI rows compare with the fastest.
    std::vector<bench::Baseline> exact_solves{{"ilu0 exact (ours)", apply_exact.t, 0.0, {}}};
    std::vector<double> cusparse_factor_ms;
    for (bool block : {false, true}) {
      if (block && m_.bs == 1) continue;
      const char* fname = block ? "bsrilu02" : "csrilu02";
      if (const std::string why = cusparse_ilu0_skip(block); !why.empty()) {
        const char* sname = block ? "bsrsv2 L+U" : "SpSV L+U (CSR)";
        log("  " + bench::skip_line("bench isai", m_.name, {fname, sname}, why));
        KernelRow f = row("ilu0_setup", fname), a = row("apply", sname);
        f.skipped = a.skipped = why;
        rows.push_back(f);
        rows.push_back(a);
        continue;
      }
      benchutil::CusparseIlu cus(A_, block);
      KernelRow f = row("ilu0_setup", fname);
      f.t = time_on_stream(s, W, R, [&] { cus.factor(); }, [&] { cus.load_values(); });
      cusparse_factor_ms.push_back(f.t.median_ms);
      if (const int zp = cus.zero_pivot(); zp >= 0)
        log(fmt::format("  note: {} reports a zero pivot at row {}", fname, zp));
      f.ratio = f.t.median_ms / ours_ilu_ms, f.ratio_of = "cusparse / ours";
      f.error = rel_diff(lu_host, cus.factors_as_csr());
      f.tolerance = block ? nan_v : ilu_tol;
      rows.push_back(f);
      KernelRow a = row("apply", block ? "bsrsv2 L+U" : "SpSV L+U (CSR)");
      a.t = benchutil::time_checked(s, W, R, [&] { cus.solve(b_, t_, z2_); }, [&] { fill(z2_, nan_v); });
      a.ratio = a.t.median_ms / apply_exact.t.median_ms, a.ratio_of = "cusparse / ours exact";
      a.error = rel_diff(z_exact, z2_.to_host());
      a.tolerance = block ? nan_v : ilu_tol;
      // An exact solve baseline only when it agrees with ours (judged with tolerance 0 below).
      exact_solves.push_back({a.variant, a.t, a.error <= exact_agree_tol ? 0.0 : a.error, {}});
      rows.push_back(a);
    }
    rows.insert(rows.begin(), setup);
    rows.push_back(apply_exact);

    // The preset as a deck gets it (implementation = "automatic"): its setup and exact application, checked
    // against our kernels' application, as ratios of ours.
    const bench::BenchPreconditioner ilu0_auto = bench::preconditioner_preset("ilu0");
    Ilu0Preconditioner automatic(e_, options_as<Ilu0Options>(ilu0_auto.spec));
    KernelRow auto_setup = ilu_setup_row(automatic, ilu0_auto, "automatic");
    const auto alu = automatic.factors();
    auto_setup.ratio = auto_setup.t.median_ms / ours_ilu_ms, auto_setup.ratio_of = "automatic / ours";
    {
      std::vector<double> a(lu_host.size());
      BLOCKRES_CUDA_CHECK(cudaMemcpy(a.data(), alu.val, a.size() * sizeof(double), cudaMemcpyDeviceToHost));
      auto_setup.error = rel_diff(lu_host, a), auto_setup.tolerance = ilu_tol;
    }
    KernelRow auto_apply = row("apply", "ilu0 exact (automatic)");
    auto_apply.toml = ilu0_auto.toml;
    auto_apply.t = benchutil::time_checked(s, W, R, [&] { automatic.apply(b_, z2_); }, [&] { fill(z2_, nan_v); });
    auto_apply.ratio = auto_apply.t.median_ms / apply_exact.t.median_ms, auto_apply.ratio_of = "automatic / ours exact";
    auto_apply.error = rel_diff(z_exact, z2_.to_host()), auto_apply.tolerance = ilu_tol;
    const std::string by = automatic.setup_summary();
    log(fmt::format("  {}: implementation \"automatic\" is {}: setup {:.2f}x, exact apply {:.2f}x the time of our kernels",
                    m_.name, by.empty() ? "the project's kernels" : by, auto_setup.ratio, auto_apply.ratio));
    rows.push_back(auto_setup);
    rows.push_back(auto_apply);
    exact_solves.push_back({auto_apply.variant, auto_apply.t, auto_apply.error <= exact_agree_tol ? 0.0 : auto_apply.error, {}});
    const double ilu_ms = auto_setup.t.median_ms;  // what a deck's ILU(0) setup costs: the ISAI rows' reference
    const auto exact_verdict = bench::judge_baselines(exact_solves, 0.0);
    const bench::Baseline& fastest_exact = exact_solves[static_cast<std::size_t>(std::max(0, exact_verdict.fastest))];
    const double cus_ilu_ms =
        cusparse_factor_ms.empty() ? nan_v : *std::min_element(cusparse_factor_ms.begin(), cusparse_factor_ms.end());
    for (std::size_t k = 0; k < exact_solves.size(); ++k)
      if (exact_verdict.wrong[k])
        log(fmt::format("  note: {} disagrees with our exact solve (difference {:.1e} > {:.0e}): not a baseline",
                        exact_solves[k].name, exact_solves[k].error, exact_agree_tol));

    // ILU(0) + ISAI(k), both views: generation and application.
    const auto brow = A_.row_ptr().to_host();
    const auto bcol = A_.col_ind().to_host();
    for (int k : o_.powers)
      for (IsaiView view : {IsaiView::scalar, IsaiView::block}) {
        const std::string v = fmt::format("ilu0+isai({}) {}", k, to_string(view));
        const bench::BenchPreconditioner pc = bench::read_bench_preconditioner(v, bench::ilu0_isai_snippet(k, view));
        Ilu0Preconditioner P(e_, options_as<Ilu0Options>(pc.spec));
        KernelRow g = row("isai_generate", v);
        g.power = k, g.view = std::string(to_string(view)), g.toml = pc.toml;
        first_setup(P, g.first_ms);
        g.nnz = P.isai_nnz();
        g.t = time_on_stream(s, W, R, [&] { P.regenerate_isai(); }, [] {}, [&] {
          for (kernels::Triangle tri : {kernels::Triangle::unit_lower, kernels::Triangle::upper})
            fill(const_cast<BsrMatrix*>(P.isai_matrix(tri))->values(), nan_v);
        });
        g.ratio = g.t.median_ms / ilu_ms, g.ratio_of = "generation / ilu0 setup (automatic)";
        g.ratio2 = g.t.median_ms / cus_ilu_ms, g.ratio2_of = "generation / fastest cuSPARSE ilu0";
        g.error = 0, g.tolerance = isai_tol;
        for (kernels::Triangle tri : {kernels::Triangle::unit_lower, kernels::Triangle::upper}) {
          const std::vector<double> got = P.isai_matrix(tri)->values().to_host();
          std::vector<double> ref(got.size());
          if (view == IsaiView::scalar) {
            const auto p = kernels::isai_pattern(tri, lu.n, lu_row_ptr.data(), lu_col.data(), k);
            kernels::cpu::isai_generate(p, {lu.n, lu_row_ptr.data(), lu_col.data(), lu_host.data()}, ref.data());
          } else {
            const auto kind = tri == kernels::Triangle::unit_lower ? kernels::IsaiKind::unit_lower : kernels::IsaiKind::upper;
            const auto p = kernels::isai_block_pattern(kind, A_.nrows(), m_.bs, brow.data(), bcol.data(), k);
            (void)kernels::cpu::isai_block_generate(
                p, {A_.nrows(), m_.bs, brow.data(), bcol.data(), lu_host.data(), kernels::BlockStorage::scalar_rows},
                ref.data());
          }
          g.error = std::max(g.error, rel_diff(got, ref));
        }
        rows.push_back(g);
        KernelRow a = row("apply", v);
        a.power = k, a.view = g.view, a.nnz = g.nnz, a.toml = g.toml;
        a.t = benchutil::time_checked(s, W, R, [&] { P.apply(b_, z_); }, poison_z);
        a.bytes = spmv_bytes(*P.isai_matrix(kernels::Triangle::unit_lower)) +
                  spmv_bytes(*P.isai_matrix(kernels::Triangle::upper));
        a.ratio = fastest_exact.time.median_ms / a.t.median_ms,
        a.ratio_of = "fastest exact (" + fastest_exact.name + ") / this";
        a.ratio2 = apply_exact.t.median_ms / a.t.median_ms, a.ratio2_of = "ours exact / this";
        {
          const auto hb = b_.to_host();
          const BsrMatrix& ML = *P.isai_matrix(kernels::Triangle::unit_lower);
          const BsrMatrix& MU = *P.isai_matrix(kernels::Triangle::upper);
          const auto ref = host_product(MU, host_product(ML, hb));
          const auto bound = host_product(MU, host_product(ML, hb, true), true);
          a.error = componentwise_error(z_.to_host(), ref, bound);
          a.tolerance = 2.0 * (longest_row(ML) + longest_row(MU)) * DBL_EPSILON;
        }
        rows.push_back(a);
      }

    // General ISAI of A.
    const auto a_host = A_.values().to_host();
    for (int k : o_.general_powers)
      for (IsaiView view : {IsaiView::scalar, IsaiView::block}) {
        const std::string v = fmt::format("isai({}) {}", k, to_string(view));
        const bench::BenchPreconditioner pc = bench::read_bench_preconditioner(v, bench::isai_snippet(k, view));
        IsaiPreconditioner P(e_, options_as<IsaiOptions>(pc.spec));
        KernelRow g = row("isai_setup", v);
        g.power = k, g.view = std::string(to_string(view)), g.toml = pc.toml;
        first_setup(P, g.first_ms);
        g.nnz = size64_t(P.isai()->M().nnzb()) * P.isai()->M().block_size() * P.isai()->M().block_size();
        g.t = time_on_stream(s, W, R, [&] { (void)P.setup(A_); }, [] {},
                             [&] { fill(const_cast<BsrMatrix&>(P.isai()->M()).values(), nan_v); });
        g.ratio = g.t.median_ms / ilu_ms, g.ratio_of = "setup / ilu0 setup";
        g.ratio2 = g.t.median_ms / cus_ilu_ms, g.ratio2_of = "setup / fastest cuSPARSE ilu0";
        const std::vector<double> got = P.isai()->M().values().to_host();
        std::vector<double> ref(got.size());
        if (view == IsaiView::block) {
          const auto p = kernels::isai_block_pattern(kernels::IsaiKind::general, A_.nrows(), m_.bs, brow.data(), bcol.data(), k);
          (void)kernels::cpu::isai_block_generate(
              p, {A_.nrows(), m_.bs, brow.data(), bcol.data(), a_host.data(), kernels::BlockStorage::bsr}, ref.data());
        } else {
          const index_t n = static_cast<index_t>(A_.scalar_rows());
          std::vector<index_t> crp(static_cast<std::size_t>(n) + 1), cc(a_host.size());
          std::vector<double> cv(a_host.size());
          kernels::cpu::bsr_to_csr({A_.nrows(), A_.ncols(), m_.bs, brow.data(), bcol.data(), a_host.data()}, crp.data(),
                                   cc.data(), cv.data());
          const auto p = kernels::isai_block_pattern(kernels::IsaiKind::general, n, 1, crp.data(), cc.data(), k);
          (void)kernels::cpu::isai_block_generate(p, {n, 1, crp.data(), cc.data(), cv.data(), kernels::BlockStorage::bsr},
                                                  ref.data());
        }
        g.error = rel_diff(got, ref), g.tolerance = isai_tol;
        rows.push_back(g);
        KernelRow a = row("apply", v);
        a.power = k, a.view = g.view, a.nnz = g.nnz, a.toml = g.toml;
        a.t = benchutil::time_checked(s, W, R, [&] { P.apply(b_, z_); }, poison_z);
        a.bytes = spmv_bytes(P.isai()->M());
        a.ratio = fastest_exact.time.median_ms / a.t.median_ms,
        a.ratio_of = "fastest exact (" + fastest_exact.name + ") / this";
        a.ratio2 = apply_exact.t.median_ms / a.t.median_ms, a.ratio2_of = "ours exact / this";
        {
          const auto hb = b_.to_host();
          const BsrMatrix& M = P.isai()->M();
          a.error = componentwise_error(z_.to_host(), host_product(M, hb), host_product(M, hb, true));
          a.tolerance = 2.0 * longest_row(M) * DBL_EPSILON;
        }
        rows.push_back(a);
      }

    // The matrix itself, for scale.
    KernelRow a = row("apply", "spmv A (reference)");
    a.t = benchutil::time_checked(s, W, R, [&] { A_.apply(1.0, b_, 0.0, z_); }, poison_z);
    a.bytes = spmv_bytes(A_);
    {
      const auto hb = b_.to_host();
      a.error = componentwise_error(z_.to_host(), host_product(A_, hb), host_product(A_, hb, true));
      a.tolerance = 2.0 * longest_row(A_) * DBL_EPSILON;
    }
    rows.push_back(a);
    return rows;
  }

  // One time-to-solution row.
  struct SolveRow {
    std::string matrix, method, preconditioner;  // preconditioner: Preconditioner::name()
    std::string label, toml;                     // the bench's label and the deck keys (empty: cuSPARSE's)
    bool setup_ok = true;
    std::string message;
    double first_ms = nan_v, setup_ms = nan_v, solve_ms = nan_v;
    SolveStatus status;
    double rel_residual = nan_v;
    bool stencil = false;
    double total_ms() const { return setup_ms + solve_ms; }
    bool verified(double rel_tol) const
    {
      if (!setup_ok) return true;
      if (status.reason == SolveReason::not_finite && stencil) return false;
      return !status.converged || rel_residual <= residual_slack * rel_tol;
    }
  };

  // The solver of one method on this matrix, its workspace (and IDR's shadow space) allocated by
  // a 2-iteration solve, so the timed solves reuse it as a Newton loop does.
  KrylovSolver solver(KrylovMethod method)
  {
    KrylovConfig kc;
    kc.method = method, kc.rel_tol = o_.rel_tol, kc.max_iterations = 2, kc.restart = 30, kc.idr_s = 4;
    KrylovSolver s(e_, kc);
    IdentityPreconditioner id;
    fill(x_, 0.0);
    (void)s.solve(A_, id, b_, x_);
    kc.max_iterations = o_.max_iterations;
    s.set_config(kc);
    return s;
  }

  SolveRow solve(KrylovSolver& solver, const std::string& method_name, const bench::BenchPreconditioner& pc)
  {
    SolveRow r = solve(solver, method_name, make_preconditioner(e_, pc.spec));
    r.label = pc.label, r.toml = pc.toml;
    return r;
  }
  // The library baseline: cuSPARSE's ILU(0) with exact solves.
  SolveRow solve_cusparse_ilu0(KrylovSolver& solver, const std::string& method_name)
  {
    SolveRow r = solve(solver, method_name, std::make_unique<CusparseIluPreconditioner>(e_));
    r.label = "cusparse_ilu0";
    return r;
  }
  SolveRow solve(KrylovSolver& solver, const std::string& method_name, std::unique_ptr<Preconditioner> P)
  {
    SolveRow r;
    r.matrix = m_.name, r.method = method_name, r.stencil = stencil_;
    r.preconditioner = P->name();
    const auto s = e_->stream();
    const auto t0 = std::chrono::steady_clock::now();
    SetupStatus st = P->setup(A_);
    e_->synchronize();
    r.first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (st.ok) r.setup_ms = time_on_stream(s, 0, 1, [&] { st = P->setup(A_); }).median_ms;
    if (!st.ok) {
      r.setup_ok = false, r.message = st.message;
      return r;
    }
    fill(x_, 0.0);
    r.solve_ms = time_on_stream(s, 0, 1, [&] { r.status = solver.solve(A_, *P, b_, x_); }).median_ms;
    r.rel_residual = benchutil::relative_residual(A_, b_, x_, r_, b_norm_);
    return r;
  }

 private:
  ExecPtr e_;
  const TestMatrix& m_;
  const IsaiBenchOptions& o_;
  bool stencil_;
  BsrMatrix A_;
  Vector b_, x_, z_, z2_, t_, r_;
  double b_norm_ = 0;
};

// The preconditioners of the solve section: the block_jacobi and ilu0 presets, then ILU(0) + ISAI(k) and the
// general ISAI(k) as snippets through the same reader, labelled as the kernels section's variants.
std::vector<bench::BenchPreconditioner> solve_preconditioners(const IsaiBenchOptions& o)
{
  std::vector<bench::BenchPreconditioner> out;
  out.push_back(bench::preconditioner_preset("block_jacobi"));
  out.push_back(bench::preconditioner_preset("ilu0"));
  for (IsaiView view : {IsaiView::scalar, IsaiView::block})
    for (int k : o.powers) {
      if (view == IsaiView::scalar && k != o.powers.front()) continue;  // same M as the block view
      out.push_back(bench::read_bench_preconditioner(fmt::format("ilu0+isai({}) {}", k, to_string(view)),
                                                     bench::ilu0_isai_snippet(k, view)));
    }
  for (int k : o.general_powers)
    out.push_back(bench::read_bench_preconditioner(fmt::format("isai({}) {}", k, to_string(IsaiView::block)),
                                                   bench::isai_snippet(k, IsaiView::block)));
  return out;
}

}  // namespace

int run_isai_bench(const IsaiBenchOptions& o, const std::function<void(const std::string&)>& log)
{
  benchutil::require_cuda_device("bench isai");
  for (int k : o.powers)
    if (k < 1 || k > max_isai_power) throw std::runtime_error(fmt::format("bench isai: power {} outside 1..{}", k, max_isai_power));
  for (int k : o.general_powers)
    if (k < 1 || k > max_isai_power)
      throw std::runtime_error(fmt::format("bench isai: general power {} outside 1..{}", k, max_isai_power));
  std::vector<std::pair<KrylovMethod, std::string>> methods;
  for (const auto& m : o.methods) {
    if (m == "gmres") methods.push_back({KrylovMethod::gmres, "gmres(30)"});
    else if (m == "idr") methods.push_back({KrylovMethod::idr, "idr(4)"});
    else if (m == "bicgstab") methods.push_back({KrylovMethod::bicgstab, "bicgstab"});
    else throw std::runtime_error(fmt::format("bench isai: unknown method '{}' (gmres, idr, bicgstab)", m));
  }
  // Matrices first: a bad file fails before anything is timed.
  std::vector<TestMatrix> matrices;
  for (int bs : o.block_sizes) {
    const int side = std::min(o.max_side, benchutil::stencil_side(bs, 7, o.matrix_gb));
    TestMatrix m{fmt::format("stencil7_bs{}", bs), bs, benchutil::stencil_pattern(side, 7), {}};
    m.values = benchutil::stencil_values(m.pattern, bs, false);
    matrices.push_back(std::move(m));
  }
  for (const auto& path : o.jacobians) matrices.push_back(benchutil::read_jacobian(path));

  auto e = create_tuned_cuda(0, o.tuning_cache, log);  // the device's tuning cache: one line
  log(fmt::format("blockres {} ({}): bench isai on {}", version_string(), provenance_text(), e->device_name()));
  Json j;
  write_report_head(j, "isai", o.json_path, e->device_name(), o.command_line);
  j["strict"] = o.strict;  // accepted like every section's; no target is evaluated here
  j["configuration"] = {{"reps", o.reps},
                        {"warmup", o.warmup},
                        {"powers", o.powers},
                        {"general_powers", o.general_powers},
                        {"rel_tol", o.rel_tol},
                        {"max_iterations", o.max_iterations},
                        {"matrices", matrix_text},
                        {"timing", timing_text},
                        {"bytes", byte_text},
                        {"solve", solve_text},
                        {"verification", verification_text}};

  const Ceilings ceil = benchutil::measure_ceilings(e, o.warmup, o.reps);
  log(benchutil::ceilings_text(ceil) + "; L2: the row's bytes fit in L2 (cache, not memory, bandwidth)");
  benchutil::write_ceilings(j, ceil);

  bool ok = true;
  Json& matrix_rows = j["matrices"] = Json::array();
  for (const auto& m : matrices)
    matrix_rows.push_back({{"name", m.name},
                           {"block_size", m.bs},
                           {"block_rows", m.pattern.nrows},
                           {"nonzero_blocks", m.pattern.nnzb()}});

  const std::string kheader = fmt::format("{:<14} {:<14} {:<26} {:>9} {:>9} {:>9} {:>9} {:>6} {:>6} {:>8} {:<30} {:>9}",
                                          "matrix", "op", "variant", "first_ms", "median_ms", "min_ms", "max_ms",
                                          "%copy", "%read", "ratio", "ratio of", "error");
  const std::string sheader = fmt::format("{:<14} {:<10} {:<34} {:>9} {:>9} {:>10} {:>10} {:>6} {:>9}  {}", "matrix",
                                          "method", "preconditioner", "first_ms", "setup_ms", "solve_ms", "total_ms",
                                          "iters", "rel_resid", "status");
  Json kernel_rows = Json::array();
  const std::size_t nstencil = o.block_sizes.size();
  for (std::size_t i = 0; i < matrices.size(); ++i) {
    const auto& m = matrices[i];
    log(fmt::format("{}: {} block rows of {}x{}, {} blocks", m.name, m.pattern.nrows, m.bs, m.bs, m.pattern.nnzb()));
    Problem p(e, m, i < nstencil, o);
    log(kheader);
    for (const auto& r : p.kernels(log)) {
      ok = ok && r.verified();
      log(kernel_row_text(r, ceil));
      kernel_rows.push_back(kernel_row_json(r, ceil));
    }
  }
  j["kernels"] = std::move(kernel_rows);

  Json solve_rows = Json::array();
  if (o.solve_section) {
    const auto preconditioners = solve_preconditioners(o);
    log("solve preconditioners (their [solver.linear.preconditioner] keys; cusparse_ilu0: cuSPARSE's ILU(0), the "
        "library baseline):");
    for (const auto& pc : preconditioners) log(fmt::format("  {:<18} {}", pc.label, pc.toml));
    for (std::size_t i = 0; i < matrices.size(); ++i) {
      const auto& m = matrices[i];
      Problem p(e, m, i < nstencil, o);
      log(fmt::format("{}: time to solution, stop at ||b - A x|| <= {:.0e} ||b|| or {} iterations", m.name, o.rel_tol,
                      o.max_iterations));
      const std::string cusparse_skip = p.cusparse_ilu0_skip(false);
      if (!cusparse_skip.empty()) log(bench::skip_line("bench isai", m.name, {"cusparse_ilu0"}, cusparse_skip));
      log(sheader);
      for (const auto& [method, mname] : methods) {
        KrylovSolver solver = p.solver(method);
        for (std::size_t q = 0; q <= preconditioners.size(); ++q) {
          if (q == preconditioners.size() && !cusparse_skip.empty()) {
            log(fmt::format("{:<14} {:<10} {:<34} SKIPPED (see above)", m.name, mname, "cusparse_ilu0"));
            solve_rows.push_back({{"matrix", m.name},
                                  {"method", mname},
                                  {"preconditioner_label", "cusparse_ilu0"},
                                  {"skipped", cusparse_skip},
                                  {"verified", true}});
            continue;
          }
          const auto r = q < preconditioners.size()
                             ? p.solve(solver, mname, preconditioners[q])
                             : p.solve_cusparse_ilu0(solver, mname);
          const bool v = r.verified(o.rel_tol);
          ok = ok && v;
          std::string text = fmt::format("{:<14} {:<10} {:<34} {} {} {:>10} {:>10} ", r.matrix, r.method,
                                         r.preconditioner, ms(r.first_ms), ms(r.setup_ms),
                                         r.setup_ok ? fmt::format("{:.2f}", r.solve_ms) : "--",
                                         r.setup_ok ? fmt::format("{:.2f}", r.total_ms()) : "--");
          text += r.setup_ok ? fmt::format("{:>6} {:>9.2e}  {}", r.status.iterations, r.rel_residual,
                                           to_string(r.status.reason))
                             : "SETUP FAILED: " + r.message;
          log(v ? text : text + "  VERIFICATION FAILED");
          Json row = {{"matrix", r.matrix},
                      {"method", r.method},
                      {"preconditioner", r.preconditioner},
                      {"preconditioner_label", r.label},
                      {"preconditioner_toml", r.toml.empty() ? Json(nullptr) : Json(r.toml)}};
          benchutil::write_solve_outcome(row, r);
          row["verified"] = v;
          solve_rows.push_back(std::move(row));
        }
      }
    }
  }
  j["solve"] = std::move(solve_rows);
  j["all_verified"] = ok;
  write_tuning_json(j, *e);  // the SpMV configurations the rows used
  write_json_file(o.json_path, j);
  log(fmt::format("report written to {}{}", o.json_path, ok ? "" : " (SOME RESULTS FAILED VERIFICATION)"));
  return ok ? 0 : 1;
}

}  // namespace blockres
