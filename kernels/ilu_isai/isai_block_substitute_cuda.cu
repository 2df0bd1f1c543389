// CUDA block substitution for the ISAI of a block ILU(0)'s factors (kernels/ilu_isai/isai_block.hpp,
// cpu::isai_block_substitute: the same operation order, so the two agree bit for bit).
//
// A team of TEAM threads per block column j (TEAM = the next power of two >= bs^2 among 1, 4, 16, 32,
// 64, 128, 256): teams of <= 32 threads share warps (128-thread blocks, 128 / TEAM columns each),
// larger ones have a thread block of their own. Thread t of a team owns the entries e = t, t + TEAM,
// ... of the bs x bs block X_R being computed; per step it walks block row R of F merged with the
// blocks of J already done (every thread of the team the same walk: broadcast loads) and chains its
// fma(-T_RS(a, k), X_S(k, c), .). X_S is read back from M (written by the team at an earlier step;
// plain loads, not the read-only path), so each step ends with the team's barrier (__syncwarp for the
// warp's teams, run to the warp's longest column; __syncthreads otherwise). For U the step's G_R goes
// to shared memory first and X_R = dinv_R G_R after a barrier.
// Cost per column: |J|^2 / 2 block products of bs^3 multiply-adds, from L1/L2 (the blocks of a
// column's rows and its own X are reused within the step), against the m^3 = |J|^3 bs^3 of the
// dense pivoted solve and its m x m scratch.
#include "kernels/cuda_check.hpp"
#include "kernels/ilu_isai/isai_block.hpp"

#include <stdexcept>
#include <string>

namespace blockres::kernels::cuda {

namespace {

constexpr int warp_block_threads = 128;  // thread block of the warp-sharing teams

template <int TEAM>
__device__ __forceinline__ void team_sync()
{
  if constexpr (TEAM <= 32) __syncwarp();
  else __syncthreads();
}

template <bool UPPER, int TEAM>
__global__ void __launch_bounds__(TEAM <= 32 ? warp_block_threads : TEAM)
    isai_substitute_kernel(index_t ncols, const index_t* __restrict__ col_ptr, const index_t* __restrict__ row_ind,
                           const index_t* __restrict__ bsr_pos, const index_t* __restrict__ f_row_ptr,
                           const index_t* __restrict__ f_col, const double* __restrict__ f_val,
                           const double* __restrict__ dinv, int bs, double* m_val)
{
  extern __shared__ double g_shared[];  // U: one bs x bs G per team
  constexpr int per_block = TEAM <= 32 ? warp_block_threads / TEAM : 1;
  const int team = threadIdx.x / TEAM, t = threadIdx.x % TEAM;
  const index_t j = index_t(blockIdx.x) * per_block + team;
  const int bs2 = bs * bs;
  index_t base = 0, nb = 0;
  if (j < ncols) {
    base = col_ptr[j];
    nb = col_ptr[j + 1] - base;
  }
  index_t steps = nb;  // uniform over the barrier's threads
  if constexpr (TEAM <= 32) steps = static_cast<index_t>(__reduce_max_sync(0xffffffffu, static_cast<unsigned>(nb)));
  double* G = g_shared + size64_t(team) * bs2;
  for (index_t k = 0; k < steps; ++k) {
    const bool active = k < nb;
    index_t R = 0;
    double* XR = nullptr;
    if (active) {
      const index_t s = UPPER ? nb - 1 - k : k;
      R = row_ind[base + s];
      XR = m_val + size64_t(bsr_pos[base + s]) * bs2;
      const index_t b0 = UPPER ? s + 1 : 0, b1 = UPPER ? nb : s;  // the blocks of J already done
      const index_t q0 = f_row_ptr[R], q1 = f_row_ptr[R + 1];
      for (int e = t; e < bs2; e += TEAM) {
        const int a = e / bs, c = e - a * bs;
        double acc = R == j && a == c ? 1.0 : 0.0;
        for (index_t q = q0, b = b0; q < q1 && b < b1;) {
          const index_t fc = f_col[q], S = row_ind[base + b];
          if (fc < S) {
            ++q;
          } else if (fc > S) {
            ++b;
          } else {
            const double* T = f_val + size64_t(q) * bs2 + size64_t(a) * bs;
            const double* X = m_val + size64_t(bsr_pos[base + b]) * bs2 + c;
            for (int kk = 0; kk < bs; ++kk) acc = fma(-T[kk], X[size64_t(kk) * bs], acc);
            ++q, ++b;
          }
        }
        if (UPPER) G[e] = acc;
        else XR[e] = acc;
      }
    }
    if constexpr (UPPER) {
      team_sync<TEAM>();  // G complete
      if (active) {
        const double* D = dinv + size64_t(R) * bs2;
        for (int e = t; e < bs2; e += TEAM) {
          const int a = e / bs, c = e - a * bs;
          double x = 0.0;
          for (int kk = 0; kk < bs; ++kk) x = fma(D[size64_t(a) * bs + kk], G[size64_t(kk) * bs + c], x);
          XR[e] = x;
        }
      }
    }
    team_sync<TEAM>();  // X_R visible to the team; G free for the next step
  }
}

template <bool UPPER, int TEAM>
void launch(stream_t s, const IsaiBlockDevicePattern& p, const BlockValuesView<const double>& F, const double* dinv,
            double* m_val)
{
  constexpr int per_block = TEAM <= 32 ? warp_block_threads / TEAM : 1;
  const index_t n = p.host->nrows;
  const auto grid = static_cast<unsigned>((size64_t(n) + per_block - 1) / per_block);
  const std::size_t smem = UPPER ? size64_t(per_block) * F.bs * F.bs * sizeof(double) : 0;
  isai_substitute_kernel<UPPER, TEAM><<<grid, TEAM <= 32 ? warp_block_threads : TEAM, smem, s>>>(
      n, p.col_ptr, p.row_ind, p.bsr_pos, F.row_ptr, F.col_ind, F.val, dinv, F.bs, m_val);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <bool UPPER>
void launch_for(stream_t s, const IsaiBlockDevicePattern& p, const BlockValuesView<const double>& F,
                const double* dinv, double* m_val)
{
  const int bs2 = F.bs * F.bs;
  if (bs2 <= 1) launch<UPPER, 1>(s, p, F, dinv, m_val);
  else if (bs2 <= 4) launch<UPPER, 4>(s, p, F, dinv, m_val);
  else if (bs2 <= 16) launch<UPPER, 16>(s, p, F, dinv, m_val);
  else if (bs2 <= 32) launch<UPPER, 32>(s, p, F, dinv, m_val);
  else if (bs2 <= 64) launch<UPPER, 64>(s, p, F, dinv, m_val);
  else if (bs2 <= 128) launch<UPPER, 128>(s, p, F, dinv, m_val);
  else launch<UPPER, 256>(s, p, F, dinv, m_val);
}

}  // namespace

void isai_block_substitute(stream_t s, const IsaiBlockDevicePattern& p, BlockValuesView<const double> F,
                           const double* dinv, double* m_val)
{
  if (p.host == nullptr)
    throw std::invalid_argument("cuda::isai_block_substitute: IsaiBlockDevicePattern without host pattern");
  check_isai_substitute(*p.host, F, dinv, "cuda::isai_block_substitute");
  if (p.host->nrows == 0) return;
  if (F.bs > isai_substitute_max_bs)
    throw std::invalid_argument("cuda::isai_block_substitute: block size " + std::to_string(F.bs) + " is above " +
                                std::to_string(isai_substitute_max_bs) + " (48 KB of shared memory per column)");
  if (p.host->kind == IsaiKind::block_upper) launch_for<true>(s, p, F, dinv, m_val);
  else launch_for<false>(s, p, F, dinv, m_val);
}

}  // namespace blockres::kernels::cuda
