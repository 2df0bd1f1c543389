// CPU references of the CPR kernels (kernels/cpr/cpr.hpp).
#include "kernels/cpr/cpr.hpp"
#include "kernels/parallel_cpu.hpp"

#include <cmath>
#include <utility>
#include <vector>

namespace blockres::kernels::cpu {

void cpr_quasi_impes_weights(index_t nrows, int bs, const index_t* diag_pos, const double* values, double* w,
                             int* info)
{
  const size64_t bb = size64_t(bs) * bs;
#pragma omp parallel if (parallel_worth(size64_t(nrows) * bs * bs * bs))
  {
    std::vector<double> m(static_cast<std::size_t>(bb));
#pragma omp for schedule(static)
    for (index_t r = 0; r < nrows; ++r) {
      const double* d = values + size64_t(diag_pos[r]) * bb;
      double* x = w + size64_t(r) * bs;
      for (int i = 0; i < bs; ++i)  // m = D^T, x = e_0
        for (int j = 0; j < bs; ++j) m[size64_t(i) * bs + j] = d[size64_t(j) * bs + i];
      for (int i = 0; i < bs; ++i) x[i] = i == 0 ? 1.0 : 0.0;
      int fail = 0;
      for (int k = 0; k < bs && !fail; ++k) {
        int p = k;
        for (int i = k + 1; i < bs; ++i)
          if (std::abs(m[size64_t(i) * bs + k]) > std::abs(m[size64_t(p) * bs + k])) p = i;
        const double piv = m[size64_t(p) * bs + k];
        if (piv == 0.0 || !std::isfinite(piv)) {
          fail = k + 1;
          break;
        }
        if (p != k) {
          for (int j = k; j < bs; ++j) std::swap(m[size64_t(p) * bs + j], m[size64_t(k) * bs + j]);
          std::swap(x[p], x[k]);
        }
        for (int i = k + 1; i < bs; ++i) {
          const double l = m[size64_t(i) * bs + k] / piv;
          for (int j = k + 1; j < bs; ++j) m[size64_t(i) * bs + j] -= l * m[size64_t(k) * bs + j];
          x[i] -= l * x[k];
        }
      }
      if (!fail) {
        double amax = 0.0;
        for (int i = bs - 1; i >= 0; --i) {
          double s = x[i];
          for (int j = i + 1; j < bs; ++j) s -= m[size64_t(i) * bs + j] * x[j];
          x[i] = s / m[size64_t(i) * bs + i];
          amax = std::max(amax, std::abs(x[i]));
        }
        if (!(amax > 0.0) || !std::isfinite(amax)) fail = bs;  // cannot happen for finite D; guards NaN
        else
          for (int i = 0; i < bs; ++i) x[i] /= amax;
      }
      info[r] = fail;
    }
  }
}

void cpr_pressure_values(index_t nrows, int bs, const index_t* row_ptr, const double* values, const double* w,
                         double* ap, double* col)
{
  const size64_t bb = size64_t(bs) * bs;
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(row_ptr[nrows]) * bs * bs))
  for (index_t r = 0; r < nrows; ++r) {
    const double* wr = w + size64_t(r) * bs;
    for (index_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
      const double* a = values + size64_t(k) * bb;
      double* c = col + size64_t(k) * bs;
      double s = 0.0;
      for (int i = 0; i < bs; ++i) {
        c[i] = a[size64_t(i) * bs];
        s += wr[i] * c[i];
      }
      ap[k] = s;
    }
  }
}

void cpr_restrict(index_t nrows, int bs, const double* w, const double* x, double* rp)
{
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(nrows) * bs))
  for (index_t r = 0; r < nrows; ++r) {
    double s = 0.0;
    for (int i = 0; i < bs; ++i) s += w[size64_t(r) * bs + i] * x[size64_t(r) * bs + i];
    rp[r] = s;
  }
}

void cpr_prolong_add(index_t nrows, int bs, const double* xp, double* x)
{
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(nrows) * 2))
  for (index_t r = 0; r < nrows; ++r) x[size64_t(r) * bs] += xp[r];
}

void cpr_pressure_residual(index_t nrows, int bs, const index_t* row_ptr, const index_t* col_ind, const double* col,
                           const double* xp, const double* r, double* r2)
{
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(row_ptr[nrows]) * bs))
  for (index_t i = 0; i < nrows; ++i)
    for (int a = 0; a < bs; ++a) {
      double sum = 0.0;
      for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) sum += col[size64_t(k) * bs + a] * xp[col_ind[k]];
      const size64_t row = size64_t(i) * bs + a;
      r2[row] = r[row] - sum;
    }
}

}  // namespace blockres::kernels::cpu
