// `blockres bench scaling` (issue 33, its first part): the row-distributed BSR product over the ranks of the run
// against rank 0 alone with the whole matrix, on either backend (CUDA: one GPU per rank, the node-local rank's).
//
// The matrix: a 7-point block stencil on an n x n x nz grid (nz >= the ranks, n x n cells a layer), random blocks,
// its rows split into nz-slabs of whole layers over the ranks (a Cartesian z split: two neighbours a rank, one
// layer of ghosts each way). Each rank builds its own rows only. Timed: the distributed product (all ranks start
// together after a barrier; a repetition's time is the slowest rank's), its halo exchange alone, and rank 0's
// product of the whole matrix (the one-GPU run of the same problem, others waiting): speedup and strong-scaling
// efficiency t1 / (P tP). Checked: the gathered distributed result against rank 0's whole product (a correctness
// check: a wrong halo fails the exit code). Bandwidth: each rank's device copy (read + write) measured in the run;
// the product's bytes (BsrMatrix::spmv_bytes of every rank's parts) over its time, against the ranks' copy sum.
#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"
#include "miniapp/bench/bench.hpp"
#include "miniapp/bench/bench_timing.hpp"
#include "miniapp/bench/report.hpp"
#include "miniapp/run/backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace blockres {

namespace {

using dist::gindex_t;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Median, min, max of the slowest rank's time per repetition (ms), every rank timing the same calls.
template <class F>
bench::Timing time_collective(const dist::Communicator& comm, const Executor& e, int warmup, int reps, F&& call)
{
  for (int i = 0; i < warmup; ++i) call();
  e.synchronize();
  std::vector<double> ms(static_cast<std::size_t>(reps));
  for (double& m : ms) {
    comm.all(true);  // a barrier: every rank starts together
    const auto t0 = Clock::now();
    call();
    e.synchronize();
    m = 1e3 * seconds_since(t0);
  }
  comm.max(std::span<double>(ms));  // each repetition: the slowest rank
  std::sort(ms.begin(), ms.end());
  bench::Timing t;
  t.median_ms = ms[ms.size() / 2];
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  t.q3_ms = ms[(3 * ms.size()) / 4];
  return t;
}

// A value in [-1, 1) from a key (splitmix64's finaliser): cheap, and the same on every rank.
double unit(std::uint64_t z)
{
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1p-52 - 1.0;
}

// The stencil block rows r of the n x n x nz grid (global ids, ascending columns) and their random values (a block's
// values from its row and column, so every rank makes the same matrix).
void stencil_rows(gindex_t r0, gindex_t r1, int n, int nz, int bs, std::vector<index_t>& row_ptr, std::vector<gindex_t>& col,
                  std::vector<double>& values)
{
  const gindex_t layer = gindex_t(n) * n;
  row_ptr.assign(1, 0);
  col.clear();
  values.clear();
  const std::size_t bb = std::size_t(bs) * std::size_t(bs);
  for (gindex_t r = r0; r < r1; ++r) {
    const gindex_t i = r % n, j = (r / n) % n, k = r / layer;
    const gindex_t cand[7] = {k > 0 ? r - layer : -1, j > 0 ? r - n : -1, i > 0 ? r - 1 : -1, r,
                              i + 1 < n ? r + 1 : -1, j + 1 < n ? r + n : -1, k + 1 < nz ? r + layer : -1};
    for (const gindex_t c : cand) {
      if (c < 0) continue;
      col.push_back(c);
      const std::uint64_t key = (std::uint64_t(r) * 0x9e3779b97f4a7c15ull) ^ (std::uint64_t(c) * 0xc2b2ae3d27d4eb4full);
      for (std::size_t e = 0; e < bb; ++e)
        values.push_back(unit(key + e) + (c == r && e % std::size_t(bs + 1) == 0 ? 8.0 : 0.0));
    }
    row_ptr.push_back(index_t(col.size()));
  }
}

}  // namespace

int run_scaling_bench(const ScalingBenchOptions& opt, const std::function<void(const std::string&)>& log_all)
{
  const dist::CommPtr comm = dist::world_communicator();
  const int P = comm->size(), me = comm->rank();
  const auto log = [&](const std::string& s) {
    if (me == 0) log_all(s);
  };
  ExecPtr exec;
  if (opt.backend == "cpu" || (opt.backend == "auto" && Executor::cuda_device_count() == 0)) {
    exec = Executor::create_cpu();
  } else {
    const int devices = Executor::cuda_device_count();
    if (devices == 0) throw std::runtime_error("bench scaling --backend cuda: no usable GPU on rank " + std::to_string(me));
    const int local = dist::local_rank();
    exec = create_tuned_cuda((local >= 0 ? local : me) % devices, opt.tuning_cache, log);
  }
  const bool cuda = exec->is_cuda();
  const double gb = opt.matrix_gb > 0 ? opt.matrix_gb : cuda ? 2.0 : 0.05;
  log(fmt::format("bench scaling: {} rank{} on {} ({}), {}", P, P == 1 ? "" : "s", cuda ? "CUDA" : "the CPU",
                  exec->device_name(), provenance_text()));
  // Copy bandwidth of every rank's device, in this run.
  double copy_gbs = 0.0;
  {
    const size64_t bytes = cuda ? (size64_t(1) << 30) : (size64_t(1) << 26);
    Array<char> a(exec, bytes), b(exec, bytes);
    exec->copy(b.data(), a.data(), std::size_t(bytes));
    const bench::Timing t = time_collective(*comm, *exec, 1, std::max(opt.reps, 10), [&] {
      exec->copy(b.data(), a.data(), std::size_t(bytes));
    });
    copy_gbs = 2.0 * double(bytes) / (t.median_ms * 1e-3) / 1e9;  // with every rank copying at once
  }
  std::vector<double> copies = comm->allgatherv(std::span<const double>(&copy_gbs, 1));
  double copy_sum = 0;
  for (double c : copies) copy_sum += c;
  log(fmt::format("device copy (read + write), every rank at once: {} GB/s per rank (sum {:.0f} GB/s)",
                  [&] {
                    std::string s;
                    for (std::size_t r = 0; r < copies.size(); ++r) s += fmt::format("{}{:.0f}", r ? ", " : "", copies[r]);
                    return s;
                  }(),
                  copy_sum));
  log("bs    cells  ranks  distributed ms  one rank ms  speedup  efficiency  GB/s (% of copy sum)  halo MB/rank  "
      "exchange ms  check");
  Json report;  // rank 0's: it alone writes the report and the provenance diff beside it
  if (me == 0) write_report_head(report, "scaling", opt.json_path, exec->device_name(), opt.command_line);
  report["ranks"] = P;
  report["backend"] = cuda ? "cuda" : "cpu";
  report["copy_gbs_per_rank"] = copies;
  Json rows = Json::array();
  ReportChecks checks;
  for (const int bs : opt.block_sizes) {
    // n x n x nz with about gb GB of blocks and indices, nz a multiple of the ranks (slabs of whole layers).
    const double per_cell = 7.0 * (8.0 * bs * bs + 4.0);
    const double cells = gb * 1e9 / per_cell;
    int nz = std::max(P, int(std::lround(std::cbrt(cells))));
    nz = (nz + P - 1) / P * P;
    const int n = std::max(2, int(std::lround(std::sqrt(cells / nz))));
    const gindex_t total = gindex_t(n) * n * nz, layer = gindex_t(n) * n;
    const gindex_t r0 = layer * (gindex_t(nz) * me / P), r1 = layer * (gindex_t(nz) * (me + 1) / P);
    std::vector<index_t> rp;
    std::vector<gindex_t> gcol;
    std::vector<double> vals;
    stencil_rows(r0, r1, n, nz, bs, rp, gcol, vals);
    std::vector<gindex_t> owned(std::size_t(r1 - r0));
    for (gindex_t r = r0; r < r1; ++r) owned[std::size_t(r - r0)] = r;
    const auto owner = [&](gindex_t r) { return int((r / layer) * P / nz); };
    dist::DistBsrMatrix D(exec, comm, bs, owned, rp, gcol, owner);
    D.set_values(vals);
    std::vector<double> xh(owned.size() * std::size_t(bs));
    for (std::size_t e = 0; e < xh.size(); ++e) xh[e] = std::sin(double(std::size_t(r0) * std::size_t(bs) + e));
    const Vector x(exec, std::span<const double>(xh));
    Vector y(exec, size64_t(owned.size()) * bs);
    const bench::Timing td = time_collective(*comm, *exec, opt.warmup, opt.reps, [&] { D.apply(1.0, x, 0.0, y); });
    double bytes = D.diag().spmv_bytes(false) + (D.offd() ? D.offd()->spmv_bytes(true) : 0.0);
    bytes = comm->sum(bytes);
    // The product's halo exchange alone (CUDA: pack, copy to the pinned buffers, MPI, copy back).
    const bench::Timing tx = time_collective(*comm, *exec, opt.warmup, opt.reps, [&] { D.exchange(x); });
    double halo_mb = D.halo_bytes() / 1e6;
    comm->max(std::span<double>(&halo_mb, 1));  // the busiest rank's
    // Rank 0 alone with the whole matrix (the others wait at the barrier), and the check.
    const std::vector<double> ydist = comm->allgatherv(std::span<const double>(y.to_host()));
    double t1 = std::numeric_limits<double>::quiet_NaN(), err = 0.0;
    bench::Timing ts;
    if (me == 0) {
      std::vector<index_t> frp;
      std::vector<gindex_t> fcol;
      std::vector<double> fv;
      stencil_rows(0, total, n, nz, bs, frp, fcol, fv);
      BsrPattern p;
      p.nrows = p.ncols = index_t(total);
      p.row_ptr = std::move(frp);
      p.col_ind.assign(fcol.begin(), fcol.end());
      BsrMatrix A(exec, bs, p);
      A.values().copy_from_host(fv);
      std::vector<double> xf(std::size_t(total) * std::size_t(bs));
      for (std::size_t e = 0; e < xf.size(); ++e) xf[e] = std::sin(double(e));
      const Vector xa(exec, std::span<const double>(xf));
      Vector ya(exec, size64_t(total) * bs);
      ts = time_collective(*dist::serial_communicator(), *exec, opt.warmup, opt.reps, [&] { A.apply(1.0, xa, 0.0, ya); });
      t1 = ts.median_ms;
      err = bench::max_rel_err(ydist, ya.to_host());
    }
    comm->all(true);
    t1 = comm->allgatherv(std::span<const double>(&t1, 1))[0];
    err = comm->allgatherv(std::span<const double>(&err, 1))[0];
    const bool ok = err <= 1e-13;
    const double gbs = bytes / (td.median_ms * 1e-3) / 1e9;
    const double speedup = t1 / td.median_ms, eff = speedup / P;
    const std::string check_name = fmt::format("bs {} distributed product against rank 0's whole product", bs);
    if (me == 0) checks.check(ReportChecks::Kind::correctness, check_name, ok, fmt::format("max rel err {:.2e}", err), log);
    log(fmt::format("{:<3} {:>9} {:>5} {:>15.3f} {:>12.3f} {:>8.2f} {:>10.0f}% {:>9.0f} ({:>5.1f}%) {:>13.2f} {:>12.3f}  {}", bs,
                    total, P, td.median_ms, t1, speedup, 100 * eff, gbs, 100 * gbs / copy_sum, halo_mb, tx.median_ms,
                    ok ? "ok" : "FAILED"));
    Json row;
    row["block_size"] = bs;
    row["cells"] = total;
    row["grid"] = {n, n, nz};
    row["distributed"] = timing_json(td);
    row["one_rank"] = timing_json(ts);
    row["exchange"] = timing_json(tx);
    row["speedup"] = speedup;
    row["efficiency"] = eff;
    row["gbs"] = gbs;
    row["fraction_of_copy_sum"] = gbs / copy_sum;
    row["halo_bytes_max_rank"] = halo_mb * 1e6;
    row["max_rel_err"] = err;
    row["verified"] = ok;
    rows.push_back(row);
  }
  report["rows"] = rows;
  const int failed = comm->max(me == 0 ? checks.failed(ReportChecks::Kind::correctness) : 0);
  if (me == 0) {
    write_json_file(opt.json_path, report);
    log("report: " + opt.json_path);
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace blockres
