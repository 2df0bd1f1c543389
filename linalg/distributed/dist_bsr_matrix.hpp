// A BSR matrix distributed by block rows (issue 33): each rank holds its owned rows, split as in PETSc's MPIBAIJ
// and hypre's ParCSR into the square owned x owned part (diag: what subdomain preconditioners take, additive
// Schwarz with overlap 0) and the owned x ghost part (offd, ghost columns compressed to the map's ghost ids). The
// product overlaps the halo exchange with the diag part: y = alpha diag x + beta y while the ghosts travel, then
// y += alpha offd x_ghost. With one rank offd is empty and the product is the serial one, bit for bit.
//
// On a CUDA executor (one GPU per rank) the entries to send are packed on the device (kernels::cuda::halo_pack);
// NCCL moves them device to device while the GPU runs the diag part (HaloChannel, where every rank has its own GPU
// and the build has NCCL), or they are staged through pinned host memory and MPI, as the MPI on the GPU machines
// is not CUDA-aware, and go back to the device before the offd part.
#pragma once

#include "linalg/bsr_matrix.hpp"
#include "linalg/distributed/halo_channel.hpp"
#include "linalg/distributed/halo_plan.hpp"

#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace blockres::dist {

class DistBsrMatrix {
 public:
  // Collective. owned: this rank's block rows as ascending global ids; row_ptr / gcol: their columns as global ids
  // (any order within a row, no repeats; e.g. a model's rows over its cells and ghost cells in its local order); owner_of: the owner of any global id, the same on every
  // rank. Throws std::invalid_argument naming the defect (on every rank when the halo plan is inconsistent).
  // trailing_blocks: room for that many more blocks after the owned rows' in the values (a model's rows of its ghost
  // cells, which it assembles but no product reads); see storage().
  DistBsrMatrix(ExecPtr exec, CommPtr comm, int bs, std::vector<gindex_t> owned, std::span<const index_t> row_ptr,
                std::span<const gindex_t> gcol, const std::function<int(gindex_t)>& owner_of,
                index_t trailing_blocks = 0);

  // The same rows, pattern, index map and halo plan as `like` with block size bs (a CPR pressure matrix
  // on the pattern of the block system); its values are unset until written through diag_values / offd_values
  // (set_values throws std::logic_error on it: it keeps no map from the constructor's pattern).
  DistBsrMatrix(const DistBsrMatrix& like, int bs);

  int block_size() const { return bs_; }
  const IndexMap& map() const { return map_; }
  const HaloPlan& halo() const { return plan_; }
  const Communicator& comm() const { return *comm_; }
  const CommPtr& comm_ptr() const { return comm_; }
  const BsrMatrix& diag() const { return *diag_; }
  // The owned x ghost part; nullopt when this rank has no ghost column.
  const std::optional<BsrMatrix>& offd() const { return offd_; }
  index_t nnzb() const { return nnzb_; }
  // The parts' values, to be written in place (a preconditioner's derived matrix).
  Array<double>& diag_values() { return diag_->values(); }
  Array<double>* offd_values() { return offd_ ? &offd_->values() : nullptr; }

  // All the values in one buffer (constructor's matrix only): the diag part's blocks, then the offd part's, then the
  // trailing blocks; block_storage()[k] is where block k of the constructor's pattern is (k >= nnzb(): the trailing
  // block k - nnzb(), at k). A model given block_storage() (physics::Model::set_block_storage) assembles its rows
  // straight into the parts: no copy of the Jacobian, no gather (issue 33: nc = 16 held 14.3 kB a cell twice).
  Array<double>& storage() { return values_; }
  std::vector<index_t> block_storage() const;

  // Values in the order of the constructor's (row_ptr, gcol) pattern, bs x bs row-major per block (host memory).
  void set_values(std::span<const double> values);
  // The same from executor memory (at least nnzb() blocks: e.g. a model's Jacobian whose first rows are the owned
  // ones), gathered on the executor into the diag and offd parts.
  void set_values(const Array<double>& values);

  // y = alpha A x + beta y over the owned rows (x and y: owned() bs entries; beta == 0: y is not read). Collective.
  void apply(double alpha, const Array<double>& x, double beta, Array<double>& y) const;
  // Bytes one exchange sends from this rank.
  double halo_bytes() const { return channel_->bytes_sent(); }
  // The halo exchange of apply() alone (collective): x's entries the peers need into this rank's ghost buffer (CUDA:
  // packed on the device, through the pinned buffers, back on the device), for timing it.
  void exchange(const Array<double>& x) const;
  // The same in two halves, for work that needs no ghost in between; the ghosts' entries (map order, bs each) are in
  // ghost_values() after finish_exchange (CUDA: once the stream reaches the copy finish_exchange queued).
  void start_exchange(const Array<double>& x) const;
  void finish_exchange() const { finish_halo(); }
  const Array<double>& ghost_values() const { return ghost_; }

 private:
  // The halo of x into ghost_: started (CUDA: packed, copied to the pinned buffer, sent), then finished (received;
  // CUDA: copied to the device on the stream).
  void start_halo(const Array<double>& x) const;
  void finish_halo() const;

  int bs_;
  CommPtr comm_;
  IndexMap map_;
  HaloPlan plan_;
  index_t nnzb_;
  index_t trailing_ = 0;
  Array<double> values_;  // constructor's matrix: diag_'s, offd_'s, then the trailing blocks (views share it)
  std::optional<BsrMatrix> diag_, offd_;
  // Pattern position -> (part, position): part 0 diag, 1 offd.
  std::vector<std::pair<int, index_t>> where_;
  mutable Array<double> ghost_;
  Array<index_t> src_diag_, src_offd_;  // pattern position of every diag / offd block (executor memory; made by the
                                        // first set_values from executor memory)
  mutable std::unique_ptr<HaloChannel> channel_;

 public:
  ~DistBsrMatrix();
  // Fixed in place: its halo exchange refers to its plan.
  DistBsrMatrix(const DistBsrMatrix&) = delete;
  DistBsrMatrix& operator=(const DistBsrMatrix&) = delete;
};

}  // namespace blockres::dist
