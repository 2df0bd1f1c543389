// See background_writer.hpp.
#include "miniapp/io/background_writer.hpp"

#include <chrono>

namespace blockres {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
}  // namespace

BackgroundWriter::BackgroundWriter(bool enabled, std::size_t max_heavy, std::function<void()> thread_init)
    : enabled_(enabled), max_heavy_(max_heavy < 1 ? 1 : max_heavy)
{
  if (enabled_)
    worker_ = std::thread([this, init = std::move(thread_init)] {
      if (init) init();
      work();
    });
}

BackgroundWriter::~BackgroundWriter()
{
  if (!enabled_) return;
  {
    std::unique_lock lock(m_);
    changed_.wait(lock, [&] { return (queue_.empty() && !running_) || error_; });
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void BackgroundWriter::submit(std::function<void()> job, bool heavy)
{
  if (!enabled_) {
    const auto t0 = Clock::now();
    job();  // an exception goes straight to the caller
    busy_ += since(t0);
    return;
  }
  std::unique_lock lock(m_);
  if (error_) std::rethrow_exception(error_);
  if (heavy && heavy_pending_ >= max_heavy_) {
    const auto t0 = Clock::now();
    changed_.wait(lock, [&] { return heavy_pending_ < max_heavy_ || error_; });
    wait_ += since(t0);
    if (error_) std::rethrow_exception(error_);
  }
  queue_.push_back({std::move(job), heavy});
  if (heavy) ++heavy_pending_;
  lock.unlock();
  changed_.notify_all();
}

void BackgroundWriter::drain()
{
  if (!enabled_) return;
  std::unique_lock lock(m_);
  const auto t0 = Clock::now();
  changed_.wait(lock, [&] { return (queue_.empty() && !running_) || error_; });
  wait_ += since(t0);
  if (error_) std::rethrow_exception(error_);
}

double BackgroundWriter::busy_seconds() const
{
  std::lock_guard lock(m_);
  return busy_;
}

double BackgroundWriter::wait_seconds() const
{
  std::lock_guard lock(m_);
  return wait_;
}

void BackgroundWriter::work()
{
  std::unique_lock lock(m_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || (!queue_.empty() && !error_); });
    if (queue_.empty() || error_) {
      if (stop_) return;
      continue;
    }
    Job job = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    const auto t0 = Clock::now();
    std::exception_ptr failed;
    try {
      job.run();
    } catch (...) {
      failed = std::current_exception();
    }
    job.run = nullptr;  // the job's captures (a state copy) go before the next one is admitted
    lock.lock();
    busy_ += since(t0);
    running_ = false;
    if (job.heavy) --heavy_pending_;
    if (failed && !error_) {
      error_ = failed;
      queue_.clear();  // dropped: what they would extend is in an unknown state
      heavy_pending_ = 0;
    }
    changed_.notify_all();
  }
}

}  // namespace blockres
