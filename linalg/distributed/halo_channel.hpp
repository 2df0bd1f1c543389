// The halo exchange of vectors in executor memory (issue 33): what a distributed matrix product and a distributed
// state (the models' cells plus their ghost cells) share. On the CPU backend the exchange runs straight between the
// vector and its ghost entries. On a CUDA executor (one GPU per rank) the entries to send are packed on the device
// (kernels::cuda::halo_pack), then either
//  - NCCL moves them from device to device (DeviceComm, where the build has NCCL and every rank its own GPU): the
//    sends and receives run on the device communicator's stream after the pack, and finish() makes the executor's
//    stream wait for them; the host never waits, and the executor's stream meanwhile runs the work queued between
//    start and finish (the interior product); or
//  - they are staged through pinned host memory, as the MPI on the GPU machines is not CUDA-aware: copied to the
//    host (start waits for the stream), moved by MPI, and copied back onto the device on the executor's stream.
#pragma once

#include "linalg/array.hpp"
#include "linalg/distributed/device_comm.hpp"
#include "linalg/distributed/halo_plan.hpp"

#include <memory>
#include <vector>

namespace blockres::dist {

class HaloChannel {
 public:
  // How a CUDA executor's exchange travels: NCCL where DeviceComm::of(comm) offers it (else the host), or always
  // through the host (tests compare the two).
  enum class Transport { automatic, host };
  // plan must outlive the channel. Collective on a CUDA executor with several ranks (the first channel of a
  // communicator decides on and creates its device communicator).
  HaloChannel(ExecPtr exec, CommPtr comm, const HaloPlan& plan, int bs, Transport transport = Transport::automatic);
  ~HaloChannel();
  HaloChannel(const HaloChannel&) = delete;
  HaloChannel& operator=(const HaloChannel&) = delete;

  // Starts the exchange of one vector: owned (the map's owned entries, bs each, executor memory) to the peers,
  // their entries into ghosts (plan.ghosts() bs doubles, executor memory) by finish(). CUDA through the host: the
  // host waits for the stream's work up to here (the packed entries), unless this rank neither sends nor receives.
  void start(const double* owned, double* ghosts);
  // Completes the exchange: the host waits for MPI and queues the copy of the ghosts onto the device, or (NCCL)
  // the executor's stream waits for the transfers.
  void finish();
  // Whether the exchange runs device to device (NCCL).
  bool on_device() const { return dcomm_ != nullptr; }
  // Bytes one exchange sends from this rank.
  double bytes_sent() const { return exchange_.bytes_sent(); }

 private:
  ExecPtr exec_;
  const HaloPlan* plan_;
  int bs_;
  HaloExchange exchange_;
  double* ghosts_ = nullptr;  // of the exchange under way
  // CUDA: the ids to pack and the packed entries (device), pinned host buffers.
  Array<index_t> send_ids_dev_;
  Array<double> send_dev_;
  struct Pinned;
  std::unique_ptr<Pinned> pinned_;
  // NCCL: the device communicator, the messages of one exchange (ghosts filled in by start), the events that hand
  // the packed entries to its stream and the completed transfers back.
  std::shared_ptr<const DeviceComm> dcomm_;
  std::vector<DeviceComm::Send> sends_;
  std::vector<DeviceComm::Recv> recvs_;
  void* packed_event_ = nullptr;
  void* done_event_ = nullptr;
};

}  // namespace blockres::dist
