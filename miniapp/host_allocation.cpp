// The blockres executable's global operator new: std::bad_alloc as before, but the failed request's
// size and allocation label are kept for main's message, and BLOCKRES_FAIL_ALLOC_ABOVE applies.
// (Only the executable's: the libraries and the tests keep the standard one.)
#include "linalg/allocation.hpp"

#include <cstdlib>
#include <new>

void* operator new(std::size_t bytes)
{
  const std::size_t limit = blockres::allocation_limit();
  const bool forced = limit > 0 && bytes > limit;
  while (!forced) {
    if (void* p = std::malloc(bytes ? bytes : 1)) return p;
    const std::new_handler handler = std::get_new_handler();
    if (!handler) break;
    handler();
  }
  auto& failed = blockres::last_failed_host_allocation();
  failed.bytes = bytes;
  failed.label = blockres::allocation_label();
  throw std::bad_alloc();
}

// The matching deallocation (the standard one would do the same; defined beside operator new so
// the pair is visibly consistent).
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
