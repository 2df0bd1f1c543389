// hypre BoomerAMG as a Preconditioner (hypre_amg.hpp): IJ/ParCSR matrix and vectors on MPI_COMM_SELF,
// the vectors' host data written and read in place.
#include "miniapp/bench/hypre_amg.hpp"

#include <HYPRE.h>
#include <HYPRE_config.h>
#include <HYPRE_parcsr_ls.h>
#include <_hypre_parcsr_ls.h>
#include <_hypre_parcsr_mv.h>
#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <type_traits>

namespace blockres {

namespace {

void check(HYPRE_Int err, const char* call)
{
  if (err != 0) {
    char msg[256] = {0};
    HYPRE_DescribeError(err, msg);
    HYPRE_ClearAllErrors();
    throw std::runtime_error(fmt::format("hypre: {} failed: {}", call, msg));
  }
}
#define BLOCKRES_HYPRE_CHECK(call) check((call), #call)

bool mpi_initialized_here = false;

void finalize_hypre()
{
  HYPRE_Finalize();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (mpi_initialized_here && !finalized) MPI_Finalize();
}

// MPI (a singleton process when not started by mpirun) and hypre, once per process; finalised at exit.
void initialize_hypre()
{
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) throw std::runtime_error("hypre: MPI_Init failed");
      mpi_initialized_here = true;
    }
    HYPRE_Init();
    std::atexit(finalize_hypre);
  });
}

}  // namespace

std::string HypreAmgSettings::describe() const
{
  return fmt::format("BoomerAMG: coarsen_type {} (HMIS), interp_type {} (ext+i), p_max_elements {}, strong_threshold "
                     "{}, agg_num_levels {}, relax {} down / {} up (l1 Gauss-Seidel forward / backward), {} on the "
                     "coarsest (Gaussian elimination), {} sweep(s), max_coarse_size {}; one V-cycle from a zero guess "
                     "per application (max_iter 1, tol 0)",
                     coarsen_type, interp_type, p_max_elements, strong_threshold, agg_num_levels, relax_down, relax_up,
                     relax_coarse, num_sweeps, max_coarse_size);
}

struct HypreBoomerAmg::Impl {
  HYPRE_IJMatrix ij = nullptr;
  HYPRE_ParCSRMatrix A = nullptr;
  HYPRE_IJVector ib = nullptr, ix = nullptr;
  HYPRE_ParVector b = nullptr, x = nullptr;
  HYPRE_Solver solver = nullptr;
  HYPRE_BigInt n = 0;

  void destroy_solver()
  {
    if (solver) HYPRE_BoomerAMGDestroy(solver);
    solver = nullptr;
  }
  void destroy_matrix()
  {
    destroy_solver();
    if (ij) HYPRE_IJMatrixDestroy(ij);
    if (ib) HYPRE_IJVectorDestroy(ib);
    if (ix) HYPRE_IJVectorDestroy(ix);
    ij = nullptr, ib = ix = nullptr, A = nullptr, b = x = nullptr, n = 0;
  }
  ~Impl() { destroy_matrix(); }

  static double* data(HYPRE_ParVector v)
  {
    return hypre_VectorData(hypre_ParVectorLocalVector(reinterpret_cast<hypre_ParVector*>(v)));
  }
};

HypreBoomerAmg::HypreBoomerAmg(HypreAmgSettings settings) : impl_(std::make_unique<Impl>()), settings_(settings)
{
  initialize_hypre();
}

HypreBoomerAmg::~HypreBoomerAmg() = default;

std::string HypreBoomerAmg::name() const { return fmt::format("hypre {} BoomerAMG", version()); }

std::string HypreBoomerAmg::version() { return HYPRE_RELEASE_VERSION; }

int HypreBoomerAmg::threads()
{
#ifdef HYPRE_USING_OPENMP
  return hypre_NumThreads();
#else
  return 1;
#endif
}

void HypreBoomerAmg::set_matrix(const BsrMatrix& M)
{
  if (M.block_size() != 1 || M.nrows() != M.ncols())
    throw std::invalid_argument("hypre BoomerAMG: square scalar (block size 1) matrices only");
  if (M.exec().is_cuda()) throw std::invalid_argument("hypre BoomerAMG: the matrix must be on the CPU executor");
  Impl& s = *impl_;
  s.destroy_matrix();
  const HYPRE_BigInt n = M.nrows();
  s.n = n;
  const index_t* rp = M.row_ptr().data();
  const index_t* ci = M.col_ind().data();
  const double* val = M.values().data();
  std::vector<HYPRE_Int> ncols(static_cast<std::size_t>(n));
  std::vector<HYPRE_BigInt> rows(static_cast<std::size_t>(n));
  for (HYPRE_BigInt r = 0; r < n; ++r) ncols[r] = rp[r + 1] - rp[r], rows[r] = r;
  std::vector<HYPRE_BigInt> cols;
  const HYPRE_BigInt* colp;
  if constexpr (std::is_same_v<HYPRE_BigInt, index_t>) {
    colp = ci;
  } else {
    cols.assign(ci, ci + M.nnzb());
    colp = cols.data();
  }
  BLOCKRES_HYPRE_CHECK(HYPRE_IJMatrixCreate(MPI_COMM_SELF, 0, n - 1, 0, n - 1, &s.ij));
  BLOCKRES_HYPRE_CHECK(HYPRE_IJMatrixSetObjectType(s.ij, HYPRE_PARCSR));
  BLOCKRES_HYPRE_CHECK(HYPRE_IJMatrixSetRowSizes(s.ij, ncols.data()));
  BLOCKRES_HYPRE_CHECK(HYPRE_IJMatrixInitialize(s.ij));
  BLOCKRES_HYPRE_CHECK(HYPRE_IJMatrixSetValues(s.ij, static_cast<HYPRE_Int>(n), ncols.data(), rows.data(), colp, val));
  BLOCKRES_HYPRE_CHECK(HYPRE_IJMatrixAssemble(s.ij));
  void* obj = nullptr;
  BLOCKRES_HYPRE_CHECK(HYPRE_IJMatrixGetObject(s.ij, &obj));
  s.A = static_cast<HYPRE_ParCSRMatrix>(obj);
  for (HYPRE_IJVector* v : {&s.ib, &s.ix}) {
    BLOCKRES_HYPRE_CHECK(HYPRE_IJVectorCreate(MPI_COMM_SELF, 0, n - 1, v));
    BLOCKRES_HYPRE_CHECK(HYPRE_IJVectorSetObjectType(*v, HYPRE_PARCSR));
    BLOCKRES_HYPRE_CHECK(HYPRE_IJVectorInitialize(*v));
    BLOCKRES_HYPRE_CHECK(HYPRE_IJVectorAssemble(*v));
  }
  BLOCKRES_HYPRE_CHECK(HYPRE_IJVectorGetObject(s.ib, &obj));
  s.b = static_cast<HYPRE_ParVector>(obj);
  BLOCKRES_HYPRE_CHECK(HYPRE_IJVectorGetObject(s.ix, &obj));
  s.x = static_cast<HYPRE_ParVector>(obj);
  std::fill(Impl::data(s.b), Impl::data(s.b) + n, 0.0);
  std::fill(Impl::data(s.x), Impl::data(s.x) + n, 0.0);
}

SetupStatus HypreBoomerAmg::setup_amg()
{
  Impl& s = *impl_;
  if (!s.A) throw std::logic_error("hypre BoomerAMG: setup_amg before set_matrix");
  s.destroy_solver();
  levels_.clear();
  const HypreAmgSettings& c = settings_;
  try {
    BLOCKRES_HYPRE_CHECK(HYPRE_BoomerAMGCreate(&s.solver));
    HYPRE_BoomerAMGSetPrintLevel(s.solver, 0);
    HYPRE_BoomerAMGSetMaxIter(s.solver, 1);
    HYPRE_BoomerAMGSetTol(s.solver, 0.0);
    HYPRE_BoomerAMGSetCoarsenType(s.solver, c.coarsen_type);
    HYPRE_BoomerAMGSetInterpType(s.solver, c.interp_type);
    HYPRE_BoomerAMGSetPMaxElmts(s.solver, c.p_max_elements);
    HYPRE_BoomerAMGSetStrongThreshold(s.solver, c.strong_threshold);
    HYPRE_BoomerAMGSetAggNumLevels(s.solver, c.agg_num_levels);
    HYPRE_BoomerAMGSetRelaxOrder(s.solver, 0);
    HYPRE_BoomerAMGSetCycleRelaxType(s.solver, c.relax_down, 1);
    HYPRE_BoomerAMGSetCycleRelaxType(s.solver, c.relax_up, 2);
    HYPRE_BoomerAMGSetCycleRelaxType(s.solver, c.relax_coarse, 3);
    HYPRE_BoomerAMGSetNumSweeps(s.solver, c.num_sweeps);
    HYPRE_BoomerAMGSetMaxCoarseSize(s.solver, c.max_coarse_size);
    BLOCKRES_HYPRE_CHECK(HYPRE_BoomerAMGSetup(s.solver, s.A, s.b, s.x));
  } catch (const std::exception& e) {
    return {false, e.what()};
  }
  auto* data = reinterpret_cast<hypre_ParAMGData*>(s.solver);
  const int nl = hypre_ParAMGDataNumLevels(data);
  hypre_ParCSRMatrix** Al = hypre_ParAMGDataAArray(data);
  for (int l = 0; l < nl && Al; ++l) {
    if (!Al[l]) break;
    const hypre_CSRMatrix* d = hypre_ParCSRMatrixDiag(Al[l]);
    const hypre_CSRMatrix* o = hypre_ParCSRMatrixOffd(Al[l]);
    levels_.push_back({static_cast<long long>(hypre_CSRMatrixNumRows(d)),
                       static_cast<long long>(hypre_CSRMatrixNumNonzeros(d)) +
                           (o ? static_cast<long long>(hypre_CSRMatrixNumNonzeros(o)) : 0LL)});
  }
  return {};
}

SetupStatus HypreBoomerAmg::setup(const BsrMatrix& A)
{
  set_matrix(A);
  return setup_amg();
}

void HypreBoomerAmg::apply(const Vector& r, Vector& z) const
{
  const Impl& s = *impl_;
  if (!s.solver) throw std::logic_error("hypre BoomerAMG: apply before setup");
  if (r.size() != s.n || z.size() != s.n) throw std::invalid_argument("hypre BoomerAMG: vector size differs from the matrix");
  std::memcpy(Impl::data(s.b), r.data(), static_cast<std::size_t>(s.n) * sizeof(double));
  std::fill(Impl::data(s.x), Impl::data(s.x) + s.n, 0.0);
  // One cycle with tol 0 never "converges": hypre may flag that (HYPRE_ERROR_CONV), which is expected here.
  HYPRE_Int err = HYPRE_BoomerAMGSolve(s.solver, s.A, s.b, s.x);
  if (err == HYPRE_ERROR_CONV) HYPRE_ClearAllErrors(), err = 0;
  check(err, "HYPRE_BoomerAMGSolve");
  std::memcpy(z.data(), Impl::data(s.x), static_cast<std::size_t>(s.n) * sizeof(double));
}

double HypreBoomerAmg::operator_complexity() const
{
  double s = 0;
  for (const auto& l : levels_) s += double(l.nnz);
  return levels_.empty() || levels_[0].nnz == 0 ? 0.0 : s / double(levels_[0].nnz);
}

double HypreBoomerAmg::grid_complexity() const
{
  double s = 0;
  for (const auto& l : levels_) s += double(l.rows);
  return levels_.empty() || levels_[0].rows == 0 ? 0.0 : s / double(levels_[0].rows);
}

}  // namespace blockres
