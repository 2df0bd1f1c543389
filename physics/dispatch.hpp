// One dispatch of a model's backend loops: the CUDA call when the executor is a CUDA one (in builds
// with CUDA), the CPU call otherwise. Shared by every model's .cpp.
#pragma once

#if BLOCKRES_HAVE_CUDA
#define BLOCKRES_PHYSICS_DISPATCH(exec, call_cpu, call_cuda) \
  do {                                                       \
    if ((exec)->is_cuda())                                   \
      call_cuda;                                             \
    else                                                     \
      call_cpu;                                              \
  } while (0)
#else
#define BLOCKRES_PHYSICS_DISPATCH(exec, call_cpu, call_cuda) call_cpu
#endif
