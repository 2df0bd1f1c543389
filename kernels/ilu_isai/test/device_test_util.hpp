// Device side of the kernels/ilu_isai GPU tests: one CUDA executor per test program, host vectors
// uploaded, NaN poisoning, and a scalar CSR matrix and an ILU schedule in device memory.
#pragma once

#include "kernels/ilu_isai/ilu.hpp"
#include "linalg/array.hpp"
#include "linalg/executor.hpp"

#include <limits>
#include <span>
#include <vector>

namespace blockres::test_device {

inline const double nan_v = std::numeric_limits<double>::quiet_NaN();

inline const ExecPtr& gpu()
{
  static const ExecPtr g = Executor::create_cuda(0);
  return g;
}

template <class T>
Array<T> upload(const ExecPtr& exec, const std::vector<T>& h)
{
  return Array<T>(exec, std::span<const T>(h));
}
template <class T>
Array<T> upload(const std::vector<T>& h)
{
  return upload(gpu(), h);
}

inline void fill_nan(Array<double>& a)
{
  a.copy_from_host(std::vector<double>(static_cast<std::size_t>(a.size()), nan_v));
}

// A scalar CSR matrix in device memory (HostCsr: a test util's Csr, with n, row_ptr, col and val).
struct DeviceCsr {
  index_t n;
  Array<index_t> row_ptr, col;
  Array<double> val;
  template <class HostCsr>
  DeviceCsr(const ExecPtr& exec, const HostCsr& A)
      : n(A.n), row_ptr(upload(exec, A.row_ptr)), col(upload(exec, A.col)), val(upload(exec, A.val))
  {
  }
  kernels::CsrView<double> view() { return {n, row_ptr.data(), col.data(), val.data()}; }
  kernels::CsrView<const double> cview() const { return {n, row_ptr.data(), col.data(), val.data()}; }
};

// Device copies of a host ILU schedule (which must outlive this object).
struct DeviceSchedule {
  Array<index_t> diag, lower_rows, upper_rows;
  kernels::cuda::IluDeviceSchedule view;
  DeviceSchedule(const ExecPtr& exec, const kernels::IluSchedule& h)
      : diag(upload(exec, h.diag)), lower_rows(upload(exec, h.lower_rows)), upper_rows(upload(exec, h.upper_rows))
  {
    view = {&h, diag.data(), lower_rows.data(), upper_rows.data()};
  }
};

}  // namespace blockres::test_device
