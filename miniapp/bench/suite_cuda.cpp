// The CUDA-only parts of the bench suite: ceilings and vendor baselines (see suite_cuda.hpp).
#include "miniapp/bench/suite_cuda.hpp"

#include "kernels/blas1/blas1.hpp"
#include "kernels/cuda_check.hpp"
#include "linalg/vector_ops.hpp"
#include "miniapp/bench/bench_common.hpp"
#include "miniapp/bench/bsrmv_tune.hpp"
#include "miniapp/io/tuning_cache.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <span>
#include <stdexcept>
#include <vector>

namespace blockres::suite::cuda {

Ceilings device_ceilings(const ExecPtr& e, size64_t bytes, int reps)
{
  Ceilings c;
  // The timings (the read pass's result checked); the rates below are the best ones, not the medians these return.
  benchutil::copy_bandwidth_gbs(e, bytes, 5, reps, c.copy_t);
  benchutil::read_bandwidth_gbs(e, bytes, 5, reps, c.read_t);
  int dev = 0, sms = 0;
  BLOCKRES_CUDA_CHECK(cudaGetDevice(&dev));
  BLOCKRES_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const size64_t lanes = size64_t(sms) * 2048 * 4;  // four full waves of 2048 threads per SM
  constexpr int iterations = 4096;
  Array<double> out(e, lanes);
  c.fp64_t = time_on(*e, 5, reps, [&] { kernels::cuda::fp64_peak(e->stream(), lanes, iterations, out.data()); });
  // Each ceiling is the best rate of its repetitions (the shortest time), as STREAM reports: the most the machine
  // showed in this run. On an H200 the read pass's median of 5 + 10 was 14% below its best (3917 against 4490
  // GB/s at 075efe7) while the same kernel in a program of its own had median = best to 0.5%; with the median
  // BSRMV rows read 102-111% of that "ceiling". The rows themselves stay medians.
  c.copy_gbs = 2.0 * double(bytes) / (c.copy_t.min_ms * 1e-3) / 1e9;
  c.read_gbs = double(bytes / 8) * 8.0 / (c.read_t.min_ms * 1e-3) / 1e9;
  c.fp64_gflops = kernels::cpu::fp64_peak_flops(lanes, iterations) / (c.fp64_t.min_ms * 1e-3) / 1e9;
  // The result of the last repetition against the CPU twin on a sample of lanes (rounding: FMA vs mul + add).
  const auto got = out.to_host();
  std::vector<double> ref(97);
  kernels::cpu::fp64_peak(97, iterations, ref.data());
  for (size64_t k = 0; k < lanes; k += lanes / 61 + 1)
    if (!(std::abs(got[k] - ref[k % 97]) <= 1e-12 * ref[k % 97]))
      throw std::runtime_error(fmt::format("bench suite: the FP64 throughput kernel's lane {} is {} where the CPU gives {}",
                                           k, got[k], ref[k % 97]));
  c.how = fmt::format("best of {} after 5; copy: cudaMemcpyAsync of 2 x {} MiB; read: stream_sum over {} MiB; fp64: {} "
                      "lanes x {} FMA chains x {} steps",
                      reps, bytes >> 20, bytes >> 20, lanes, kernels::cpu::fp64_peak_chains, iterations);
  return c;
}

namespace {

struct Sparse {
  cusparseHandle_t h = nullptr;
  cusparseMatDescr_t d = nullptr;
  explicit Sparse(const ExecPtr& e)
  {
    BLOCKRES_CUSPARSE_CHECK(cusparseCreate(&h));
    BLOCKRES_CUSPARSE_CHECK(cusparseSetStream(h, static_cast<cudaStream_t>(e->stream())));
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateMatDescr(&d));
  }
  ~Sparse()
  {
    cusparseDestroyMatDescr(d);
    cusparseDestroy(h);
  }
};

struct Blas {
  cublasHandle_t h = nullptr;
  explicit Blas(const ExecPtr& e)
  {
    BLOCKRES_CUBLAS_CHECK(cublasCreate(&h));
    BLOCKRES_CUBLAS_CHECK(cublasSetStream(h, static_cast<cudaStream_t>(e->stream())));
  }
  ~Blas() { cublasDestroy(h); }
};

// One device pointer per block of `base` (n_per_block doubles each).
template <class T>
Array<T*> block_pointers(const ExecPtr& e, T* base, index_t count, size64_t per_block)
{
  std::vector<T*> p(static_cast<std::size_t>(count));
  for (index_t k = 0; k < count; ++k) p[k] = base + size64_t(k) * per_block;
  return Array<T*>(e, std::span<T* const>(p));
}

}  // namespace

bench::Timing cusparse_bsrmv(const ExecPtr& e, const BsrMatrix& A, const Array<double>& x, Array<double>& y,
                             int warmup, int reps)
{
  Sparse sp(e);
  const double one = 1.0, zero = 0.0;
  if (A.block_size() == 1) {  // cusparseDbsrmv needs blocks of 2 or more: the generic CSR product (same arrays)
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t vx, vy;
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateCsr(&mat, A.nrows(), A.ncols(), A.nnzb(), const_cast<index_t*>(A.row_ptr().data()),
                                              const_cast<index_t*>(A.col_ind().data()), const_cast<double*>(A.values().data()),
                                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateDnVec(&vx, A.ncols(), const_cast<double*>(x.data()), CUDA_R_64F));
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateDnVec(&vy, A.nrows(), y.data(), CUDA_R_64F));
    size_t bytes = 0;
    BLOCKRES_CUSPARSE_CHECK(cusparseSpMV_bufferSize(sp.h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy,
                                                    CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    Array<double> buf(e, bytes / 8 + 1);
    const auto t = time_on(*e, warmup, reps, [&] {
      BLOCKRES_CUSPARSE_CHECK(cusparseSpMV(sp.h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F,
                                           CUSPARSE_SPMV_ALG_DEFAULT, buf.data()));
    });
    cusparseDestroyDnVec(vx);
    cusparseDestroyDnVec(vy);
    cusparseDestroySpMat(mat);
    return t;
  }
  return time_on(*e, warmup, reps, [&] {
    BLOCKRES_CUSPARSE_CHECK(cusparseDbsrmv(sp.h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, A.nrows(),
                                           A.ncols(), A.nnzb(), &one, sp.d, A.values().data(), A.row_ptr().data(),
                                           A.col_ind().data(), A.block_size(), x.data(), &zero, y.data()));
  });
}

bench::Timing cublas_getrf(const ExecPtr& e, int n, index_t count, const Array<double>& a, int warmup, int reps)
{
  Blas bl(e);
  Array<double> work(e, a.size());
  Array<int> piv(e, size64_t(count) * n), info(e, size64_t(count));
  auto ptr = block_pointers(e, work.data(), count, size64_t(n) * n);
  const auto t = time_on(*e, warmup, reps, [&] {
    BLOCKRES_CUBLAS_CHECK(cublasDgetrfBatched(bl.h, n, ptr.data(), n, piv.data(), info.data(), count));
  }, [&] { e->copy(work.data(), a.data(), a.size() * sizeof(double)); });
  for (int v : info.to_host())
    if (v != 0) throw std::runtime_error(fmt::format("cublasDgetrfBatched: info {} on the suite's n = {} batch", v, n));
  return t;
}

bench::Timing cublas_getrs(const ExecPtr& e, int n, index_t count, const Array<double>& a, const Array<double>& b,
                           int warmup, int reps)
{
  Blas bl(e);
  Array<double> work(e, a.size()), x(e, b.size());
  Array<int> piv(e, size64_t(count) * n), info(e, size64_t(count));
  auto ptr = block_pointers(e, work.data(), count, size64_t(n) * n);
  auto xp = block_pointers(e, x.data(), count, size64_t(n));
  e->copy(work.data(), a.data(), a.size() * sizeof(double));
  BLOCKRES_CUBLAS_CHECK(cublasDgetrfBatched(bl.h, n, ptr.data(), n, piv.data(), info.data(), count));
  int param = 0;
  const auto t = time_on(*e, warmup, reps, [&] {
    BLOCKRES_CUBLAS_CHECK(cublasDgetrsBatched(bl.h, CUBLAS_OP_T, n, 1, ptr.data(), n, piv.data(), xp.data(), n, &param,
                                              count));
  }, [&] { e->copy(x.data(), b.data(), b.size() * sizeof(double)); });
  if (param != 0) throw std::runtime_error(fmt::format("cublasDgetrsBatched: invalid parameter {}", -param));
  return t;
}

bench::Timing cublas_matinv(const ExecPtr& e, int n, index_t count, const Array<double>& a, int warmup, int reps)
{
  Blas bl(e);
  Array<double> inv(e, a.size());
  Array<int> info(e, size64_t(count));
  auto dst = block_pointers(e, inv.data(), count, size64_t(n) * n);
  std::vector<const double*> hs(static_cast<std::size_t>(count));
  for (index_t k = 0; k < count; ++k) hs[k] = a.data() + size64_t(k) * n * n;
  Array<const double*> srcc(e, std::span<const double* const>(hs));
  return time_on(*e, warmup, reps, [&] {
    BLOCKRES_CUBLAS_CHECK(cublasDmatinvBatched(bl.h, n, srcc.data(), n, dst.data(), n, info.data(), count));
  });
}

bench::Timing cublas_gemv(const ExecPtr& e, int n, index_t count, const Array<double>& a, const Array<double>& b,
                          Array<double>& x, int warmup, int reps)
{
  Blas bl(e);
  const double one = 1.0, zero = 0.0;
  return time_on(*e, warmup, reps, [&] {
    BLOCKRES_CUBLAS_CHECK(cublasDgemvStridedBatched(bl.h, CUBLAS_OP_T, n, n, &one, a.data(), n, static_cast<long long>(n) * n,
                                                    b.data(), 1, n, &zero, x.data(), 1, n, count));
  });
}

VendorPair cublas_block_jacobi(const ExecPtr& e, const BsrMatrix& A, const Array<double>& r, Array<double>& z,
                               int warmup, int reps)
{
  const int n = A.block_size();
  const index_t count = A.nrows();
  if (n > 32) throw std::invalid_argument(fmt::format("cublasDmatinvBatched takes blocks up to 32, not {}", n));
  const std::vector<index_t> diag = A.diag_pos().to_host();
  Blas bl(e);
  Array<double> inv(e, size64_t(count) * n * n);
  Array<int> info(e, size64_t(count));
  auto dst = block_pointers(e, inv.data(), count, size64_t(n) * n);
  std::vector<const double*> hs(static_cast<std::size_t>(count));
  for (index_t k = 0; k < count; ++k) {
    if (diag[k] < 0) throw std::invalid_argument(fmt::format("cublas_block_jacobi: row {} has no diagonal block", k));
    hs[k] = A.values().data() + size64_t(diag[k]) * n * n;
  }
  Array<const double*> src(e, std::span<const double* const>(hs));
  VendorPair t;
  t.setup = time_on(*e, warmup, reps, [&] {
    BLOCKRES_CUBLAS_CHECK(cublasDmatinvBatched(bl.h, n, src.data(), n, dst.data(), n, info.data(), count));
  });
  for (int v : info.to_host())
    if (v != 0) throw std::runtime_error(fmt::format("cublasDmatinvBatched: info {} on a diagonal block", v));
  t.apply = cublas_gemv(e, n, count, inv, r, z, warmup, reps);
  return t;
}

Json device_facts(const ExecPtr& e)
{
  int dev = 0;
  BLOCKRES_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  BLOCKRES_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  size_t free_b = 0, total_b = 0;
  BLOCKRES_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  int driver = 0, runtime = 0, sm_clock = 0, mem_clock = 0, bus = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaDeviceGetAttribute(&sm_clock, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev);
  int cublas = 0;
  {
    Blas bl(e);
    cublasGetVersion(bl.h, &cublas);
  }
  int cusparse = 0;
  {
    Sparse sp(e);
    cusparseGetVersion(sp.h, &cusparse);
  }
  char pci[32] = {};
  cudaDeviceGetPCIBusId(pci, sizeof pci, dev);
  auto ver = [](int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); };
  return {{"name", p.name},
          {"sm_count", p.multiProcessorCount},
          {"pci_bus_id", pci},
          {"compute_capability", fmt::format("{}.{}", p.major, p.minor)},
          {"memory_gib", double(total_b) / 1073741824.0},
          {"free_memory_gib", double(free_b) / 1073741824.0},
          {"max_sm_clock_mhz", sm_clock / 1000},
          {"max_memory_clock_mhz", mem_clock / 1000},
          {"memory_bus_bits", bus},
          {"l2_mib", double(p.l2CacheSize) / 1048576.0},
          {"driver", ver(driver)},
          {"cuda_runtime", ver(runtime)},
          {"cublas", cublas},
          {"cusparse", cusparse}};
}

std::string tune_if_missing(const std::string& tuning_cache, const std::vector<int>& bs, double budget_s, const Log& log)
{
  if (!tuning_cache.empty() || !(budget_s > 0)) return {};  // a cache or none named, or no tuning asked: the user's choice
  try {
    const CudaDeviceIdentity id = Executor::cuda_device_identity(0);
    const TuningKey key = make_tuning_key(id, compiled_bsrmv_space());
    const std::string path = default_tuning_cache_path(key);
    if (path.empty()) return "not tuned: no folder for the tuning cache (BLOCKRES_TUNING_DIR, XDG_CACHE_HOME, HOME unset)";
    const TuningLoad have = load_tuning_cache("", key, compiled_bsrmv_space());
    if (have.status == TuningCacheStatus::loaded) return {};
    log(fmt::format("no usable tuning cache for this GPU ({}): tuning BSRMV at bs {} first, within {:.0f} s",
                    have.message, fmt::join(bs, ","), budget_s));
    const auto t0 = std::chrono::steady_clock::now();
    const ExecPtr e = Executor::create_cuda(0);  // configurations are timed by name: its tuning plays no part
    const benchutil::Ceilings c = benchutil::measure_ceilings(e, 2, 10);
    benchutil::BsrmvTuneOptions t;
    t.block_sizes = bs;
    t.size_gb = 0.5;
    t.reps = 10;
    t.warmup = 2;
    t.budget_s = budget_s;
    t.deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(budget_s));
    t.command_line = "blockres bench (the suite's tune-first step)";
    auto result = benchutil::tune_bsrmv(e, t, c, [](const std::string&) {});
    result.record.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    write_tuning_cache(path, result.record);
    const TuningLoad back = load_tuning_cache(path, key, compiled_bsrmv_space());
    if (back.status != TuningCacheStatus::loaded)
      return fmt::format("tuned, but the cache written to {} does not read back ({}): the built-in rule", path, back.message);
    return fmt::format("tuned first: {} block size(s) in {:.0f} s{}, cache written to {}{}", result.record.bsrmv.size(),
                       result.record.elapsed_s,
                       result.record.not_measured.empty()
                           ? std::string()
                           : fmt::format(" (bs {} left to the rule: budget)", fmt::join(result.record.not_measured, ",")),
                       path,
                       result.wrong.empty() ? std::string()
                                            : fmt::format("; {} configuration(s) did not verify and were never chosen",
                                                          result.wrong.size()));
  } catch (const std::exception& ex) {
    return std::string("not tuned (") + ex.what() + "): the built-in rule";
  }
}

}  // namespace blockres::suite::cuda

