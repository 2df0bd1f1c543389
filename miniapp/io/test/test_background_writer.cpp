// The background writer of a run's output (miniapp/io/background_writer.hpp): jobs run in order on
// one other thread, at most max_heavy heavy jobs are admitted at once (the next submit blocks), the
// first failure stops the writer and reaches the caller, the destructor waits for queued jobs, and
// a disabled writer runs every job in the caller.
#include "miniapp/io/background_writer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace blockres;
using namespace std::chrono_literals;

namespace {

// A gate the jobs wait at until the test opens it.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  void wait()
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return open; });
  }
  void release()
  {
    {
      std::lock_guard lock(m);
      open = true;
    }
    cv.notify_all();
  }
};

}  // namespace

TEST(BackgroundWriter, RunsJobsInSubmissionOrderOnAnotherThread)
{
  std::vector<int> seen;
  std::atomic<int> other_thread{0};
  const auto caller = std::this_thread::get_id();
  BackgroundWriter w(true);
  for (int i = 0; i < 200; ++i)
    w.submit(
        [&, i] {
          seen.push_back(i);  // only the worker touches it until drain() returns
          if (std::this_thread::get_id() != caller) ++other_thread;
        },
        i % 3 == 0);
  w.drain();
  ASSERT_EQ(seen.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(seen[std::size_t(i)], i);
  EXPECT_EQ(other_thread.load(), 200);
  EXPECT_GE(w.busy_seconds(), 0.0);
}

TEST(BackgroundWriter, AtMostMaxHeavyJobsAdmittedTheNextSubmitWaits)
{
  Gate gate;
  std::atomic<int> ran{0};
  BackgroundWriter w(true, 2);
  w.submit([&] { gate.wait(), ++ran; }, true);
  w.submit([&] { gate.wait(), ++ran; }, true);
  w.submit([&] { ++ran; }, false);  // light jobs never wait
  std::atomic<bool> third_admitted{false}, submitting{false};
  std::thread t([&] {
    submitting = true;
    w.submit([&] { ++ran; }, true);
    third_admitted = true;
  });
  while (!submitting) std::this_thread::yield();
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(third_admitted.load()) << "a third heavy job was admitted while two were pending";
  EXPECT_EQ(ran.load(), 0);
  gate.release();
  t.join();
  EXPECT_TRUE(third_admitted.load());
  w.drain();
  EXPECT_EQ(ran.load(), 4);
  EXPECT_GT(w.wait_seconds(), 0.0);  // the blocked submit counted as waiting
}

TEST(BackgroundWriter, FirstFailureStopsTheWriterAndReachesTheCaller)
{
  std::atomic<int> ran{0};
  Gate gate;
  BackgroundWriter w(true);
  w.submit([&] { gate.wait(), ++ran; });
  w.submit([] { throw std::runtime_error("result file: no space left on device"); });
  w.submit([&] { ++ran; });  // queued behind the failure: never runs
  gate.release();
  try {
    w.drain();
    FAIL() << "drain() returned after a failed job";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "result file: no space left on device");
  }
  EXPECT_EQ(ran.load(), 1);
  EXPECT_THROW(w.submit([&] { ++ran; }), std::runtime_error);  // refused, not run
  EXPECT_THROW(w.drain(), std::runtime_error);                  // stays failed
  EXPECT_EQ(ran.load(), 1);
}

TEST(BackgroundWriter, DestructorWaitsForQueuedJobs)
{
  std::atomic<int> ran{0};
  {
    BackgroundWriter w(true);
    for (int i = 0; i < 20; ++i)
      w.submit([&] {
        std::this_thread::sleep_for(2ms);
        ++ran;
      });
  }
  EXPECT_EQ(ran.load(), 20);
}

TEST(BackgroundWriter, DisabledRunsEveryJobInTheCaller)
{
  const auto caller = std::this_thread::get_id();
  int in_caller = 0;
  BackgroundWriter w(false);
  for (int i = 0; i < 5; ++i) w.submit([&] { in_caller += std::this_thread::get_id() == caller; }, true);
  EXPECT_EQ(in_caller, 5);  // already run: no drain needed
  EXPECT_THROW(w.submit([] { throw std::runtime_error("x"); }), std::runtime_error);
  w.drain();
}
