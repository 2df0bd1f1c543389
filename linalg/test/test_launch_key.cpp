// What keeps a recorded application valid (Preconditioner::launch_epoch, LaunchKey) and the CPU's
// side of StreamGraph (nothing to record: the caller runs its code directly). CPU only; the CUDA
// recordings are checked against direct launches in kernels/cpr/test/test_cpr_gpu.cpp.
#include "linalg/preconditioners/preconditioner.hpp"
#include "linalg/stream_graph.hpp"

#include <gtest/gtest.h>

using namespace blockres;

TEST(LaunchKey, AddressesSizesAndSwappedPairs)
{
  const auto e = Executor::create_cpu();
  Array<double> a(e, 10), b(e, 10), c(e, 11);
  const auto key = [](const Array<double>& x, const Array<double>& y) { return LaunchKey().add(x).add(y).value(); };
  EXPECT_NE(key(a, b), 0u);
  EXPECT_EQ(key(a, b), key(a, b));
  EXPECT_NE(key(a, b), key(b, a));  // roles matter
  EXPECT_NE(key(a, b), key(a, c));  // another array
  EXPECT_EQ(LaunchKey().add_pair(a, b).value(), LaunchKey().add_pair(b, a).value());  // a pair's order does not
  EXPECT_NE(LaunchKey().add_pair(a, b).value(), LaunchKey().add_pair(a, c).value());
  const std::uint64_t before = LaunchKey().add(a).value();
  a = Array<double>(e, 12);  // reallocated: another size (and, as a rule, another address)
  EXPECT_NE(LaunchKey().add(a).value(), before);
  EXPECT_NE(LaunchKey().add(std::uint64_t(1)).value(), LaunchKey().add(std::uint64_t(2)).value());
}

TEST(StreamGraph, CpuHasNothingToRecord)
{
  const auto e = Executor::create_cpu();
  StreamGraph g(e);
  int ran = 0;
  EXPECT_FALSE(g.record([&] { ++ran; }));
  EXPECT_EQ(ran, 0);  // not run by the recording: the caller runs it
  EXPECT_FALSE(g.ready());
  EXPECT_THROW(g.replay(), std::logic_error);
  EXPECT_FALSE(StreamGraph::capturing(*e));
}

// A preconditioner that does not track its launches says 0: every setup counts as a change.
TEST(LaunchKey, UntrackedPreconditionerIsZero)
{
  struct Plain final : Preconditioner {
    SetupStatus setup(const BsrMatrix&) override { return {}; }
    void apply(const Vector&, Vector&) const override {}
    std::string name() const override { return "plain"; }
  } p;
  EXPECT_EQ(p.launch_epoch(), 0u);
}
