// The bench suite's kernel and Krylov sections, on either backend through the executor (the CPU backend's
// kernels are the CPU references; the CUDA rows also run beside their cuSPARSE / cuBLAS baselines). Every row's
// result is checked on a sample against an independent host computation (an SpMV row, a block's residual), and
// the preconditioners' outputs on CUDA against the same preconditioner on the CPU backend.
#include "miniapp/bench/suite.hpp"

#include "kernels/batched/batched_gh.hpp"
#include "kernels/batched/batched_lu.hpp"
#include "linalg/bsr_matrix.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/ilu0/ilu0_base.hpp"
#include "linalg/preconditioners/preconditioner.hpp"
#include "linalg/preconditioners/registry.hpp"
#include "linalg/vector_ops.hpp"
#include "miniapp/bench/amg_bench_matrices.hpp"
#if BLOCKRES_HAVE_HYPRE
#include "miniapp/bench/hypre_amg.hpp"
#endif
#include "miniapp/bench/preconditioner_presets.hpp"

#if BLOCKRES_HAVE_CUDA
#include "miniapp/bench/suite_cuda.hpp"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>

namespace blockres::suite {

namespace {

using bench::nan_v;

// Values uniform in [-1, 1), the same for any thread count.
std::vector<double> random_values(size64_t n, std::uint64_t seed)
{
  std::vector<double> v(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (size64_t i = 0; i < n; ++i)
    v[i] = double(amgbench::hash64(seed * 0x9e3779b97f4a7c15ull + i) >> 11) * 0x1.0p-52 - 1.0;
  return v;
}

// Sample indices 0, step, 2 step, ... (about `want` of them) of 0..n-1, always including the last.
std::vector<size64_t> sample(size64_t n, size64_t want)
{
  std::vector<size64_t> s;
  if (n == 0) return s;
  const size64_t step = std::max<size64_t>(1, n / want);
  for (size64_t i = 0; i < n; i += step) s.push_back(i);
  if (s.back() != n - 1) s.push_back(n - 1);
  return s;
}

// Bytes of the suite's test matrices and batches by size.
double target_bytes(const std::string& size, bool cuda)
{
  if (size == "small") return 96e6;  // above most CPUs' last-level cache; inside an H100's or H200's L2 it is not
  if (size == "medium") return cuda ? 512e6 : 256e6;
  return cuda ? 2e9 : 1e9;
}

// The row every kernel writes (the report's "kernels" items, bench_suite.schema.json).
Json kernel_row(const std::string& kernel, const std::string& variant, int bs, const bench::Timing& t, double bytes,
                double ceiling_gbs, const char* of)
{
  const double gbs = bytes / (t.median_ms * 1e-3) / 1e9;
  return {{"kernel", kernel},   {"variant", variant}, {"block_size", bs},
          {"ms", t.median_ms},  {"bytes", bytes},     {"gbs", gbs},
          {"fraction", gbs / ceiling_gbs}, {"fraction_of", of}, {"timing", timing_json(t)},
          {"baseline", nullptr}, {"speedup", nullptr}};
}

void set_baseline(Json& row, const std::string& name, const bench::Timing& t)
{
  row["baseline"] = {{"name", name}, {"ms", t.median_ms}, {"timing", timing_json(t)}};
  row["speedup"] = t.median_ms / row["ms"].get<double>();
}

void set_check(Json& row, Verdict& v, bool pass, double error, double tol, size64_t sampled, const std::string& what,
               const Log& log)
{
  row["check"] = {{"pass", pass}, {"error", error}, {"tolerance", tol}, {"sampled", sampled}, {"what", what}};
  const std::string name = fmt::format("{} {} bs {}", row["kernel"].get<std::string>(), row["variant"].get<std::string>(),
                                       row["block_size"].get<int>());
  v.check(pass, fmt::format("kernel {}: result check failed ({}: error {:.3g} > {:.3g})", name, what, error, tol));
  if (!pass) log(fmt::format("FAILED check: {}: {} error {:.3g} above {:.3g}", name, what, error, tol));
}

// A block 7-point matrix on an n^3 grid: the finite-volume pattern, random blocks with a dominant diagonal
// (each diagonal block gets 2 bs + 8 on its diagonal, every off-diagonal entry is in [-1, 1)).
struct HostBsr {
  int bs = 1;
  BsrPattern p;
  std::vector<double> v;
};
HostBsr block_stencil(int n, int bs, std::uint64_t seed)
{
  amgbench::FvSpec spec;
  spec.nx = spec.ny = spec.nz = n;
  HostBsr h;
  h.bs = bs;
  h.p = amgbench::finite_volume_7(spec).pattern;
  h.v = random_values(size64_t(h.p.nnzb()) * bs * bs, seed);
  const size64_t bb = size64_t(bs) * bs;
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < h.p.nrows; ++r) {
    const index_t q = h.p.find(r, r);
    for (int a = 0; a < bs; ++a) h.v[size64_t(q) * bb + size64_t(a) * bs + a] += 2.0 * bs + 8.0;
  }
  return h;
}

int cube_side(double bytes, int bs) { return std::max(4, int(std::cbrt(bytes / (7.0 * (8.0 * bs * bs + 4.0))))); }

// y(r) = sum over the row's blocks of A x, on the host, for the sampled block rows; returns the largest
// |y - ref| / (sum |a| |x| + tiny).
double spmv_error(const HostBsr& h, const std::vector<double>& x, const std::vector<double>& y,
                  const std::vector<size64_t>& rows)
{
  const int bs = h.bs;
  double worst = 0.0;
  for (size64_t r : rows) {
    for (int a = 0; a < bs; ++a) {
      double s = 0.0, mag = 0.0;
      for (index_t q = h.p.row_ptr[r]; q < h.p.row_ptr[r + 1]; ++q)
        for (int c = 0; c < bs; ++c) {
          const double prod = h.v[(size64_t(q) * bs + a) * bs + c] * x[size64_t(h.p.col_ind[q]) * bs + c];
          s += prod, mag += std::abs(prod);
        }
      const double err = std::abs(y[r * bs + a] - s) / (mag + 1e-300);
      worst = std::isfinite(y[r * bs + a]) ? std::max(worst, err) : INFINITY;
    }
  }
  return worst;
}

void bsrmv_rows(const ExecPtr& e, const std::string& size, int reps, const Ceilings& c, Json& rows, Verdict& v,
                const Log& log)
{
  for (int bs : suite_bsrmv_block_sizes()) {
    const int n = cube_side(target_bytes(size, e->is_cuda()), bs);
    const HostBsr h = block_stencil(n, bs, 1000 + bs);
    BsrMatrix A(e, bs, h.p);
    A.values().copy_from_host(h.v);
    const auto hx = random_values(A.scalar_rows(), 77 + bs);
    Array<double> x(e, std::span<const double>(hx)), y(e, A.scalar_rows());
    const auto t = time_on(*e, 2, reps, [&] { A.apply(1.0, x, 0.0, y); }, [] {}, [&] { fill(y, nan_v); });
    Json row = kernel_row("bsrmv", "7-point", bs, t, A.spmv_bytes(false), c.read_gbs, "read");
    row["rows"] = A.nrows();
    auto hy = y.to_host();
    if (poisoned("bsrmv")) hy[0] += 1.0;
    const auto s = sample(size64_t(A.nrows()), 200);
    const double err = spmv_error(h, hx, hy, s);
    set_check(row, v, err <= 1e-13, err, 1e-13, s.size(), "sampled block rows against a host product", log);
#if BLOCKRES_HAVE_CUDA
    if (e->is_cuda()) {
      const std::string name = bs == 1 ? "cusparseSpMV (CSR)" : "cusparseDbsrmv (row-major blocks)";
      try {
        Array<double> yb(e, A.scalar_rows());
        const auto tb = cuda::cusparse_bsrmv(e, A, x, yb, 2, reps);
        const double errb = spmv_error(h, hx, yb.to_host(), s);
        if (errb <= 1e-13) set_baseline(row, name, tb);
        else v.warnings.push_back(fmt::format("bsrmv bs {}: {}'s result is off by {:.3g}: no baseline", bs, name, errb));
      } catch (const std::exception& ex) {  // a library refusal costs the row its baseline, not the suite
        v.warnings.push_back(fmt::format("bsrmv bs {}: {} did not run ({}): no baseline", bs, name, ex.what()));
      }
    }
#endif
    v.timed(fmt::format("bsrmv bs {}", bs), t, 1.5);
    log(fmt::format("bsrmv bs {:2} ({}^3 cells): {:.4f} ms, {:.1f} GB/s, {:.0f}% of read{}", bs, n, t.median_ms,
                    row["gbs"].get<double>(), 100 * row["fraction"].get<double>(),
                    row["speedup"].is_number() ? fmt::format(", {:.2f}x cuSPARSE", row["speedup"].get<double>()) : ""));
    rows.push_back(std::move(row));
  }
}

// ---- batched dense kernels --------------------------------------------------------------------------
struct Batch {
  int n = 0;
  index_t count = 0;
  std::vector<double> a, b;  // host: blocks (row-major, diagonally dominant) and right-hand sides
  kernels::BatchLayout L() const { return {count, nullptr, nullptr, n, n}; }
};

// max over the sampled blocks of ||A x - b||_inf / (||A||_inf ||x||_inf + ||b||_inf).
double solve_error(const Batch& B, const std::vector<double>& x, const std::vector<size64_t>& blocks)
{
  const int n = B.n;
  double worst = 0.0;
  for (size64_t k : blocks) {
    const double* a = B.a.data() + k * n * n;
    const double* b = B.b.data() + k * n;
    const double* xk = x.data() + k * n;
    double rmax = 0, anorm = 0, xmax = 0, bmax = 0;
    for (int i = 0; i < n; ++i) {
      double s = -b[i], row = 0;
      for (int j = 0; j < n; ++j) s += a[i * n + j] * xk[j], row += std::abs(a[i * n + j]);
      rmax = std::max(rmax, std::abs(s)), anorm = std::max(anorm, row);
      xmax = std::max(xmax, std::abs(xk[i])), bmax = std::max(bmax, std::abs(b[i]));
      if (!std::isfinite(s)) return INFINITY;
    }
    worst = std::max(worst, rmax / (anorm * xmax + bmax));
  }
  return worst;
}

// One batched kernel call on e's backend: the CPU reference or the CUDA kernel of the same signature (stream first).
#if BLOCKRES_HAVE_CUDA
#define BLOCKRES_SUITE_CALL(e, op, ...) \
  ((e)->is_cuda() ? kernels::cuda::op((e)->stream(), __VA_ARGS__) : kernels::cpu::op(__VA_ARGS__))
#else
#define BLOCKRES_SUITE_CALL(e, op, ...) kernels::cpu::op(__VA_ARGS__)
#endif

void batched_rows(const ExecPtr& e, const std::string& size, int reps, const Ceilings& c, Json& rows, Verdict& v,
                  const Log& log)
{
  for (int n : {4, 8, 16, 32, 64, 128}) {
    Batch B;
    B.n = n;
    B.count = index_t(std::clamp<double>(target_bytes(size, e->is_cuda()) / (8.0 * n * n), 64, 1 << 20));
    const size64_t nv = size64_t(B.count) * n * n, nx = size64_t(B.count) * n;
    B.a = random_values(nv, 5000 + n);
    for (index_t k = 0; k < B.count; ++k)
      for (int i = 0; i < n; ++i) B.a[size64_t(k) * n * n + size64_t(i) * n + i] += double(n);
    B.b = random_values(nx, 6000 + n);
    const auto L = B.L();
    Array<double> orig(e, std::span<const double>(B.a)), work(e, nv), bv(e, std::span<const double>(B.b)), x(e, nx);
    Array<index_t> piv(e, nx);
    Array<int> info(e, size64_t(B.count));
    const auto blocks = sample(size64_t(B.count), 100);
    const double tol = 100.0 * n * DBL_EPSILON;
    const std::string variant = "uniform batch";
    auto restore = [&] { e->copy(work.data(), orig.data(), nv * sizeof(double)); };
    auto info_ok = [&] {
      for (int i : info.to_host())
        if (i != 0) return false;
      return true;
    };
    // A vendor baseline, measured once per n (the LU and Gauss–Huard rows share cuBLAS's getrf / getrs on the same
    // blocks); one that throws (a library refusal, info != 0) costs its rows the baseline, not the suite.
    struct Vendor {
      bool tried = false;
      std::optional<bench::Timing> t;
      std::string why;
    };
    [[maybe_unused]] Vendor getrf, getrs, matinv, gemv;
    [[maybe_unused]] auto vendor = [&](Json& row, const std::string& name, Vendor& b,
                                       const std::function<bench::Timing()>& f) {
      if (!b.tried) {
        b.tried = true;
        try {
          b.t = f();
        } catch (const std::exception& ex) {
          b.why = ex.what();
        }
      }
      if (b.t) set_baseline(row, name, *b.t);
      else v.warnings.push_back(fmt::format("{} n {}: {} did not run ({}): no baseline", row["kernel"].get<std::string>(),
                                            n, name, b.why));
    };
    auto fill_info = [&] { info.copy_from_host(std::vector<int>(static_cast<std::size_t>(B.count), -7)); };
    auto finish = [&](Json row, const bench::Timing& t, const std::string& kernel, bool ok_info,
                      const std::vector<double>& hx, const char* what) {
      std::vector<double> xs = hx;
      if (poisoned(kernel)) xs[0] += 1.0;
      const double err = ok_info ? solve_error(B, xs, blocks) : INFINITY;
      row["blocks"] = B.count;
      set_check(row, v, err <= tol, err, tol, blocks.size(), what, log);
      v.timed(fmt::format("{} n {}", kernel, n), t, 1.5);
      log(fmt::format("{:<20} n {:3} ({} blocks): {:.4f} ms, {:.0f}% of copy{}", kernel, n, B.count,
                      row["ms"].get<double>(), 100 * row["fraction"].get<double>(),
                      row["speedup"].is_number() ? fmt::format(", {:.2f}x {}", row["speedup"].get<double>(),
                                                               row["baseline"]["name"].get<std::string>())
                                                 : ""));
      rows.push_back(std::move(row));
    };

    // A factorisation and the solve with its factors (x = A^-1 b), beside cuBLAS's getrf / getrs.
    auto factor_and_solve = [&](const std::string& fname, const std::string& sname, const std::function<void()>& factor,
                                const std::function<void()>& solve) {
      const auto tf = time_on(*e, 2, reps, factor, restore, fill_info);
      const bool ok = info_ok();
      Json f = kernel_row(fname, variant, n, tf, 16.0 * double(nv), c.copy_gbs, "copy");
      const auto ts = time_on(*e, 2, reps, solve, [] {}, [&] { fill(x, nan_v); });
      const auto hx = x.to_host();
      Json s = kernel_row(sname, variant, n, ts, 8.0 * double(nv) + 20.0 * double(nx), c.copy_gbs, "copy");
#if BLOCKRES_HAVE_CUDA
      if (e->is_cuda()) {
        vendor(f, "cublasDgetrfBatched", getrf, [&] { return cuda::cublas_getrf(e, n, B.count, orig, 2, reps); });
        vendor(s, "cublasDgetrsBatched", getrs, [&] { return cuda::cublas_getrs(e, n, B.count, orig, bv, 2, reps); });
      }
#endif
      finish(std::move(f), tf, fname, ok, hx, "sampled blocks: residual of the solve with these factors");
      finish(std::move(s), ts, sname, ok, hx, "sampled blocks: residual");
    };
    // LU (partial pivoting).
    factor_and_solve("lu_factor", "lu_solve",
                     [&] { BLOCKRES_SUITE_CALL(e, lu_factor, L, work.data(), piv.data(), info.data()); },
                     [&] { BLOCKRES_SUITE_CALL(e, lu_solve, L, work.data(), piv.data(), bv.data(), x.data()); });
    if (n > kernels::batched_gh_max_size) continue;
    // Gauss–Huard with implicit pivoting.
    constexpr auto gh = kernels::GhStorage::standard;
    factor_and_solve(
        "gauss_huard_factor", "gauss_huard_solve",
        [&] { BLOCKRES_SUITE_CALL(e, gauss_huard_factor, L, work.data(), piv.data(), info.data(), gh); },
        [&] { BLOCKRES_SUITE_CALL(e, gauss_huard_solve, L, work.data(), piv.data(), gh, bv.data(), x.data()); });
    // Gauss–Jordan inversion, then the block-diagonal product with the inverses (x = A^-1 b).
    {
      const auto ti = time_on(*e, 2, reps, [&] {
        BLOCKRES_SUITE_CALL(e, gauss_jordan_invert, L, work.data(), info.data());
      }, restore, fill_info);
      const bool ok = info_ok();
      Json inv = kernel_row("gauss_jordan_invert", variant, n, ti, 16.0 * double(nv), c.copy_gbs, "copy");
      const auto tg = time_on(*e, 2, reps, [&] {
        BLOCKRES_SUITE_CALL(e, block_diag_gemv, L, work.data(), bv.data(), x.data());
      }, [] {}, [&] { fill(x, nan_v); });
      const auto hx = x.to_host();
      Json g = kernel_row("block_diag_gemv", variant, n, tg, 8.0 * double(nv) + 16.0 * double(nx), c.copy_gbs, "copy");
#if BLOCKRES_HAVE_CUDA
      if (e->is_cuda()) {
        vendor(inv, "cublasDmatinvBatched", matinv, [&] { return cuda::cublas_matinv(e, n, B.count, orig, 2, reps); });
        // cuBLAS's product with the same inverses; it must give our x (another summation order), else no baseline.
        vendor(g, "cublasDgemvStridedBatched", gemv, [&] {
          Array<double> xv(e, nx);
          fill(xv, nan_v);
          const auto t = cuda::cublas_gemv(e, n, B.count, work, bv, xv, 2, reps);
          const double d = bench::max_rel_err(xv.to_host(), hx);
          if (!(d <= 1e-12))
            throw std::runtime_error(fmt::format("its product differs from ours by {:.3g} of max |x|", d));
          return t;
        });
      }
#endif
      finish(std::move(inv), ti, "gauss_jordan_invert", ok, hx, "sampled blocks: residual of A^-1 b");
      finish(std::move(g), tg, "block_diag_gemv", ok, hx, "sampled blocks: residual of A^-1 b");
    }
  }
}

// ---- preconditioners ---------------------------------------------------------------------------------
// ||r - A z|| / ||r|| after z = M^-1 r: below 1 for any preconditioner worth the name on these matrices.
double reduction(const BsrMatrix& A, const Array<double>& r, const Array<double>& z)
{
  Array<double> t(A.exec_ptr(), r.size());
  copy(r, t);
  A.apply(-1.0, z, 1.0, t);
  return norm2(t) / norm2(r);
}

void preconditioner_rows(const ExecPtr& e, const std::string& size, int reps, const Ceilings& c, Json& rows,
                         Verdict& v, const Log& log)
{
  struct Case {
    std::string label, snippet;
    int bs;
  };
  const std::vector<Case> cases = {
      {"block_jacobi", "type = \"block_jacobi\"", 4},
      {"bilu0", "type = \"ilu0\", factor_view = \"block\"", 4},
      {"bilu0_isai", "type = \"ilu0\", factor_view = \"block\", trisolve = \"isai\"", 4},
      {"amg", "type = \"amg\"", 1},
  };
  const ExecPtr cpu = e->is_cuda() ? Executor::create_cpu() : e;
  for (const Case& pc : cases) {
    const int n = pc.bs == 1 ? cube_side(target_bytes(size, e->is_cuda()) / 2, 1) : cube_side(target_bytes(size, e->is_cuda()) / 2, pc.bs);
    HostBsr h;
    if (pc.bs == 1) {  // the AMG's matrix: a pressure-like finite-volume matrix (log-normal k)
      const auto m = amgbench::generate("lognormal1", n, 7);
      h.bs = 1, h.p = m.pattern, h.v = m.values;
    } else {
      h = block_stencil(n, pc.bs, 3000 + pc.bs);
    }
    BsrMatrix A(e, h.bs, h.p);
    A.values().copy_from_host(h.v);
    const auto bp = bench::read_bench_preconditioner(pc.label, pc.snippet);
    auto M = make_preconditioner(e, bp.spec);
    const auto ts = time_on(*e, 1, reps, [&] {
      const auto st = M->setup(A);
      if (!st.ok) throw std::runtime_error(fmt::format("bench suite: {} setup failed: {}", pc.label, st.message));
    });
    const auto hr = random_values(A.scalar_rows(), 4000 + pc.bs);
    Array<double> r(e, std::span<const double>(hr)), z(e, A.scalar_rows());
    const auto ta = time_on(*e, 2, reps, [&] { M->apply(r, z); }, [] {}, [&] { fill(z, nan_v); });
    const double red = reduction(A, r, z);
    const double mat_bytes = A.spmv_bytes(false);
    // A setup that states its bytes (block-Jacobi touches only the blocks it inverts: as one pass over the matrix it
    // read 129% of the copy ceiling on an H100) is a fraction of those; the others of one pass over the matrix.
    const double sb = M->setup_bytes();
    Json srow = kernel_row(pc.label + "_setup", pc.label == "amg" ? "lognormal1" : "7-point", pc.bs, ts,
                           sb > 0 ? sb : mat_bytes, c.copy_gbs, "copy");
    srow["bytes_meaning"] = sb > 0 ? "the bytes the preconditioner states one setup moves"
                                   : "one pass over the matrix (the setup's time in SpMV-equivalents: 1 / fraction x "
                                     "copy / read)";
    const double ab = M->apply_bytes();
    Json arow = kernel_row(pc.label + "_apply", pc.label == "amg" ? "lognormal1" : "7-point", pc.bs, ta,
                           ab > 0 ? ab : mat_bytes, c.copy_gbs, "copy");
    arow["bytes_meaning"] = ab > 0 ? "the bytes the preconditioner states one application moves" : "one pass over the matrix";
    arow["residual_reduction"] = red;
    // The check: the application reduces the residual; on CUDA also the same output as the CPU backend's
    // preconditioner on the same matrix (the CPU backend is the reference of every kernel).
    auto hz = z.to_host();
    if (poisoned(pc.label)) hz[0] += 1.0;
    double err = red < 1.0 ? 0.0 : red;
    std::string what = "||r - A M^-1 r|| / ||r|| < 1";
    constexpr double tol = 1e-8;
    if (e->is_cuda()) {
      BsrMatrix Ac(cpu, h.bs, h.p);
      Ac.values().copy_from_host(h.v);
      auto Mc = make_preconditioner(cpu, bp.spec);
      Mc->setup(Ac);
      Array<double> rc(cpu, std::span<const double>(hr)), zc(cpu, A.scalar_rows());
      Mc->apply(rc, zc);
      err = std::max(err, bench::max_rel_err(hz, zc.to_host()));
      what += " and max |z - z_cpu| / max |z_cpu| <= 1e-8";
    } else if (poisoned(pc.label)) {
      err = INFINITY;  // the hook must fail the CPU check too: the residual reduction of the poisoned output
    }
    set_check(srow, v, err <= tol, err, tol, A.scalar_rows(), what, log);
    set_check(arow, v, err <= tol, err, tol, A.scalar_rows(), what, log);
    // The vendor peer of the ILU(0) rows on CUDA: cuSPARSE's ILU(0) of the same matrix (the registry's ilu0 with
    // implementation = "cusparse": bsrilu02 + bsrsv2 at bs 3..8, else csrilu02 + SpSV, exact triangular solves),
    // timed the same way; its application must reduce the residual too, else it is no baseline.
    if (e->is_cuda() && (pc.label == "bilu0" || pc.label == "bilu0_isai")) {
      try {
        const auto vp = bench::read_bench_preconditioner("cusparse_ilu0", "type = \"ilu0\", implementation = \"cusparse\"");
        auto V = make_preconditioner(e, vp.spec);
        const auto vs = time_on(*e, 1, reps, [&] {
          const auto st = V->setup(A);
          if (!st.ok) throw std::runtime_error("setup failed: " + st.message);
        });
        Array<double> zv(e, A.scalar_rows());
        const auto va = time_on(*e, 2, reps, [&] { V->apply(r, zv); });
        const double vred = reduction(A, r, zv);
        if (vred < 1.0) {
          const std::string name = V->setup_summary().empty() ? std::string("ILU(0) by cuSPARSE") : V->setup_summary();
          set_baseline(srow, name, vs);
          set_baseline(arow, name, va);
          arow["baseline"]["residual_reduction"] = vred;
        } else {
          v.warnings.push_back(fmt::format("{}: cuSPARSE's ILU(0) did not reduce the residual ({:.3g}): no baseline",
                                           pc.label, vred));
        }
      } catch (const std::exception& ex) {
        v.warnings.push_back(fmt::format("{}: cuSPARSE's ILU(0) did not run ({}): no baseline", pc.label, ex.what()));
      }
    }
#if BLOCKRES_HAVE_CUDA
    // The vendor peer of the block-Jacobi rows on CUDA: cuBLAS alone (matinvBatched on the diagonal blocks read in
    // place, gemvStridedBatched with the inverses); its z must be ours up to rounding, else it is no baseline.
    if (e->is_cuda() && pc.label == "block_jacobi") {
      try {
        Array<double> zv(e, A.scalar_rows());
        fill(zv, nan_v);
        const auto t = cuda::cublas_block_jacobi(e, A, r, zv, 2, reps);
        const double d = bench::max_rel_err(zv.to_host(), z.to_host());
        if (d <= 1e-10) {
          set_baseline(srow, "cublasDmatinvBatched (diagonal blocks in place)", t.setup);
          set_baseline(arow, "cublasDgemvStridedBatched", t.apply);
        } else {
          v.warnings.push_back(fmt::format("block_jacobi: cuBLAS's z differs from ours by {:.3g} of max |z|: no baseline",
                                           d));
        }
      } catch (const std::exception& ex) {
        v.warnings.push_back(fmt::format("block_jacobi: the cuBLAS peer did not run ({}): no baseline", ex.what()));
      }
    }
#endif
#if BLOCKRES_HAVE_HYPRE
    // The peer of the AMG rows on the CPU backend, where built in: hypre BoomerAMG (the configuration of `bench amg`)
    // on the same matrix, its setup timed from hypre's own matrix (the copy into it untimed) and one V-cycle; it
    // must reduce the residual too, else it is no baseline. (No AMG in CUDA's libraries: the CUDA rows have none.)
    if (!e->is_cuda() && pc.label == "amg") {
      try {
        HypreBoomerAmg hy;
        hy.set_matrix(A);
        const auto hs = time_on(*e, 1, reps, [&] {
          const auto st = hy.setup_amg();
          if (!st.ok) throw std::runtime_error("setup failed: " + st.message);
        });
        Array<double> zh(e, A.scalar_rows());
        const auto ha = time_on(*e, 2, reps, [&] { hy.apply(r, zh); }, [] {}, [&] { fill(zh, nan_v); });
        const double hred = reduction(A, r, zh);
        const std::string name = fmt::format("hypre BoomerAMG {} ({} thread{})", HypreBoomerAmg::version(),
                                             HypreBoomerAmg::threads(), HypreBoomerAmg::threads() == 1 ? "" : "s");
        if (hred < 1.0) {
          set_baseline(srow, name, hs);
          set_baseline(arow, name, ha);
          arow["baseline"]["residual_reduction"] = hred;  // a cheaper cycle may reduce less: the reader weighs both
        } else {
          v.warnings.push_back(fmt::format("amg: {} did not reduce the residual ({:.3g}): no baseline", name, hred));
        }
      } catch (const std::exception& ex) {
        v.warnings.push_back(fmt::format("amg: hypre BoomerAMG did not run ({}): no baseline", ex.what()));
      }
    }
#endif
    v.timed(pc.label + " setup", ts, 1.5);
    v.timed(pc.label + " apply", ta, 1.5);
    std::string peer;  // the peers' line: one name when setup and apply have the same peer, else each its own
    if (srow["baseline"].is_object() && arow["baseline"].is_object()) {
      const Json &bs = srow["baseline"], &ba = arow["baseline"];
      const auto ns = bs["name"].get<std::string>(), na = ba["name"].get<std::string>();
      peer = ns == na ? fmt::format("; {}: setup {:.3f} ms, apply {:.4f} ms", ns, bs["ms"].get<double>(),
                                    ba["ms"].get<double>())
                      : fmt::format("; setup {} {:.3f} ms, apply {} {:.4f} ms", ns, bs["ms"].get<double>(), na,
                                    ba["ms"].get<double>());
      if (ba.contains("residual_reduction"))
        peer += fmt::format(", residual reduction {:.3f}", ba["residual_reduction"].get<double>());
    }
    log(fmt::format("{:<12} bs {} ({}^3 cells): setup {:.3f} ms ({:.1f} SpMV passes), apply {:.4f} ms ({:.0f}% of copy), "
                    "residual reduction {:.3f}{}",
                    pc.label, pc.bs, n, ts.median_ms, c.read_gbs * ts.median_ms * 1e-3 * 1e9 / mat_bytes, ta.median_ms,
                    100 * arow["fraction"].get<double>(), red, peer));
    rows.push_back(std::move(srow));
    rows.push_back(std::move(arow));
    // ISAI generation on its own (inside the setup row above with the factorisation): regenerate_isai() from the
    // factors, timed; the application afterwards must give the same z (the generation is deterministic).
    if (pc.label == "bilu0_isai") {
      auto* ilu = dynamic_cast<Ilu0Base*>(M.get());
      if (!ilu) throw std::logic_error("bench suite: bilu0_isai is not an ILU(0) preconditioner");
      const auto tg = time_on(*e, 1, reps, [&] { ilu->regenerate_isai(); });
      Array<double> z2(e, A.scalar_rows());
      fill(z2, nan_v);
      M->apply(r, z2);
      auto hz2 = z2.to_host();
      if (poisoned("isai_generation")) hz2[0] += 1.0;
      const double gerr = bench::max_rel_err(hz2, z.to_host());
      Json grow = kernel_row("isai_generation", "7-point", pc.bs, tg, mat_bytes, c.copy_gbs, "copy");
      grow["bytes_meaning"] = "one pass over the matrix (the generation's time in SpMV-equivalents)";
      set_check(grow, v, gerr <= 1e-13, gerr, 1e-13, A.scalar_rows(),
                "the application after regenerating equals the one before (max |z2 - z| / max |z|)", log);
      v.timed("isai generation", tg, 1.5);
      log(fmt::format("isai_generation bs {}: {:.3f} ms ({:.1f} SpMV passes)", pc.bs, tg.median_ms,
                      c.read_gbs * tg.median_ms * 1e-3 * 1e9 / mat_bytes));
      rows.push_back(std::move(grow));
    }
  }
}

}  // namespace

void run_kernel_section(const ExecPtr& e, const std::string& size, int reps, const Ceilings& c, Json& rows, Verdict& v,
                        const Log& log)
{
  bsrmv_rows(e, size, reps, c, rows, v, log);
  batched_rows(e, size, reps, c, rows, v, log);
  preconditioner_rows(e, size, reps, c, rows, v, log);
}

void run_krylov_section(const ExecPtr& e, const std::string& size, int reps, const Ceilings& c, Json& rows, Verdict& v,
                        const Log& log)
{
  constexpr int bs = 4, iterations = 60;
  const int n = cube_side(target_bytes(size, e->is_cuda()) / 2, bs);
  const HostBsr h = block_stencil(n, bs, 8000);
  const auto hb = random_values(size64_t(h.p.nrows) * bs, 8001);
  struct Outcome {
    SolveStatus st;
    std::vector<double> x;
    double residual = 0;  // ||b - A x|| recomputed here from the returned x
  };
  auto run = [&](const ExecPtr& ex, bench::Timing* t, KrylovProfile* prof) {
    BsrMatrix A(ex, bs, h.p);
    A.values().copy_from_host(h.v);
    auto none = make_preconditioner(ex, preconditioner_spec("none"));
    none->setup(A);
    KrylovConfig cfg;
    cfg.method = KrylovMethod::fgmres;
    cfg.rel_tol = 0.0;
    cfg.max_iterations = iterations;
    KrylovSolver solver(ex, cfg);
    Array<double> b(ex, std::span<const double>(hb)), x(ex, hb.size());
    Outcome o;
    auto solve = [&] {
      fill(x, 0.0);
      o.st = solver.solve(A, *none, b, x);
    };
    if (t) {
      *t = time_on(*ex, 1, std::max(3, reps / 2), solve);
      solver.reset_profile();
      solve();
      *prof = solver.profile();
    } else {
      solve();
    }
    Array<double> r(ex, hb.size());
    copy(b, r);
    A.apply(-1.0, x, 1.0, r);
    o.residual = norm2(r);
    o.x = x.to_host();
    return o;
  };
  bench::Timing t;
  KrylovProfile prof;
  Outcome o = run(e, &t, &prof);
  const SolveStatus& st = o.st;
  const double us = t.median_ms * 1e3 / st.iterations;
  const double bytes = prof.bytes / double(std::max<long long>(prof.iterations, 1));
  Json row = {{"method", "fgmres"}, {"restart", 30}, {"block_size", bs}, {"rows", h.p.nrows}, {"iterations", st.iterations},
              {"us_per_iteration", us}, {"bytes_per_iteration", bytes},
              {"fraction", bytes / (us * 1e-6) / 1e9 / c.copy_gbs}, {"fraction_of", "copy"}, {"timing", timing_json(t)},
              {"preconditioner", "none"}, {"initial_residual", st.initial_residual}, {"reported_residual", st.residual},
              {"residual", o.residual}};
  // The check: 60 iterations that solved the system (this matrix converges to rounding in about 40: ||b - A x||,
  // recomputed here from x, below 1e-6 of the initial residual), and on CUDA the iterate of the CPU backend's same
  // solve (the CPU backend is the reference). The residuals themselves are not compared: at the rounding floor
  // two correct solves differ in every digit.
  double err = st.iterations == iterations && o.residual <= 1e-6 * st.initial_residual ? o.residual / st.initial_residual
                                                                                       : INFINITY;
  std::string what = "60 iterations, ||b - A x|| <= 1e-6 ||b||";
  if (poisoned("krylov")) o.x[0] += 1.0;
  if (e->is_cuda()) {
    const Outcome oc = run(Executor::create_cpu(), nullptr, nullptr);
    const double d = bench::max_rel_err(o.x, oc.x);
    row["cpu_residual"] = oc.residual;
    row["x_difference_to_cpu"] = d;
    err = std::max(err, d);
    what += ", x within 1e-6 (max norm, relative) of the CPU backend's";
    log(fmt::format("krylov check: residual {:.6e} (reported {:.6e}), CPU backend {:.6e} (reported {:.6e}); max |x - x_cpu| "
                    "/ max |x_cpu| = {:.3g}",
                    o.residual, st.residual, oc.residual, oc.st.residual, d));
  } else if (poisoned("krylov")) {
    err = INFINITY;
  }
  row["check"] = {{"pass", err <= 1e-6}, {"error", err}, {"tolerance", 1e-6}, {"what", what}};
  v.check(err <= 1e-6, fmt::format("krylov fgmres bs {}: result check failed ({}: error {:.3g})", bs, what, err));
  v.timed("krylov fgmres", t, 1.5);
  log(fmt::format("krylov fgmres(30) bs {} ({}^3 cells): {:.1f} us per iteration, {:.0f} MB per iteration, {:.0f}% of copy",
                  bs, n, us, bytes / 1e6, 100 * row["fraction"].get<double>()));
  rows.push_back(std::move(row));
}

}  // namespace blockres::suite
