// Pass-2 launchers of the multicomponent model with nc fixed at compile time (the sizes that pay:
// 1-2 one thread per cell, 3/4/8/16/32/64 a thread group per cell; multicomponent_cuda.cuh).
#include "physics/multicomponent/multicomponent_cuda.cuh"

namespace blockres::physics::multicomponent::cuda {

template <int NC>
void assemble_cells_fixed(stream_t s, const Params& P, const Mesh& M, const double* x, const double* x0,
                          const double* props, double dt, double* R, double* J)
{
  if constexpr (NC <= 2) {
    detail::cells_thread_kernel<NC><<<detail::blocks_for(M.ncell, 128), 128, 0, s>>>(P, M, x, x0, props, dt, R, J);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  } else {
    constexpr int group = detail::fixed_group_size(NC, detail::block_threads<NC>);
    constexpr int ept = (NC * NC + group - 1) / group;
    detail::launch_cells_group<NC, ept>(s, P, M, x, x0, props, dt, R, J, group);
  }
}

template void assemble_cells_fixed<1>(stream_t, const Params&, const Mesh&, const double*, const double*, const double*, double, double*, double*);
template void assemble_cells_fixed<2>(stream_t, const Params&, const Mesh&, const double*, const double*, const double*, double, double*, double*);
template void assemble_cells_fixed<3>(stream_t, const Params&, const Mesh&, const double*, const double*, const double*, double, double*, double*);
template void assemble_cells_fixed<4>(stream_t, const Params&, const Mesh&, const double*, const double*, const double*, double, double*, double*);
template void assemble_cells_fixed<8>(stream_t, const Params&, const Mesh&, const double*, const double*, const double*, double, double*, double*);
template void assemble_cells_fixed<16>(stream_t, const Params&, const Mesh&, const double*, const double*, const double*, double, double*, double*);
template void assemble_cells_fixed<32>(stream_t, const Params&, const Mesh&, const double*, const double*, const double*, double, double*, double*);
template void assemble_cells_fixed<64>(stream_t, const Params&, const Mesh&, const double*, const double*, const double*, double, double*, double*);

}  // namespace blockres::physics::multicomponent::cuda
