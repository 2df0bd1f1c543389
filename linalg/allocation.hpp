// Out-of-memory reporting: what is being allocated (a per-thread label), the failed request's size,
// and a test hook that makes large requests fail (BLOCKRES_FAIL_ALLOC_ABOVE).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace blockres {

// Names what the enclosing code allocates ("the Jacobian", "the grid"), for the message of an
// allocation that fails inside it: a per-thread stack of string literals (no allocation itself).
class AllocationLabel {
 public:
  explicit AllocationLabel(const char* what) noexcept;
  ~AllocationLabel();
  AllocationLabel(const AllocationLabel&) = delete;
  AllocationLabel& operator=(const AllocationLabel&) = delete;
};
// The innermost label of this thread, nullptr when none.
const char* allocation_label() noexcept;

// Test hook: a request of more than this many bytes fails as if the memory were exhausted (0: no
// limit). Executor::allocate honours it on both backends (on the device the message still gives the
// device's real free memory), and so does the host operator new of the blockres executable.
std::size_t allocation_limit() noexcept;
void set_allocation_limit(std::size_t bytes) noexcept;
// Reads BLOCKRES_FAIL_ALLOC_ABOVE (bytes; unset or empty: no limit). Throws std::invalid_argument
// for a value that is not a positive integer.
void set_allocation_limit_from_environment();

// The last host allocation that failed on this thread in the blockres executable's operator new:
// the bytes asked and the label active then (main reports a std::bad_alloc with them).
struct FailedAllocation {
  std::size_t bytes = 0;
  const char* label = nullptr;
};
FailedAllocation& last_failed_host_allocation() noexcept;

// An allocation failed; the message names what, the bytes asked and (device) the bytes free.
struct OutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "allocating the Jacobian: 1.234 GB (1234000000 bytes)" (without a label: "allocating 1.234 GB ...").
std::string describe_allocation(const char* label, std::size_t bytes);

}  // namespace blockres
