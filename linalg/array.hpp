// Array<T>: a move-only buffer in an executor's memory (host or device), RAII.
#pragma once

#include "linalg/executor.hpp"

#include <memory>
#include <span>
#include <type_traits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace blockres {

// An allocator whose resize() leaves new elements default-initialised (arithmetic types: not
// written), so a large host buffer's pages are first touched by the loop that fills it, on that
// loop's threads, instead of by a serial zero fill (at a million cells the page faults of the
// set-up's arrays cost as much as filling them).
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept
  {
  }
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>)
  {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args)
  {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
// A host vector for set-up arrays filled in parallel after resize().
template <class T>
using HostBuffer = std::vector<T, DefaultInitAllocator<T>>;

template <class T>
class Array {
 public:
  Array() = default;
  Array(ExecPtr exec, size64_t n) : exec_(std::move(exec)), size_(n)
  {
    if (n < 0) throw std::invalid_argument("Array: negative size");
    data_ = static_cast<T*>(exec_->allocate(static_cast<std::size_t>(n) * sizeof(T)));
  }
  Array(ExecPtr exec, std::span<const T> host) : Array(std::move(exec), static_cast<size64_t>(host.size()))
  {
    copy_from_host(host);
  }
  // A non-owning view of n elements at `data` in exec's memory (e.g. one column of a
  // MultiVector); the owner must outlive it.
  static Array view(ExecPtr exec, T* data, size64_t n)
  {
    Array a;
    a.exec_ = std::move(exec);
    a.data_ = data;
    a.size_ = n;
    a.owner_ = false;
    return a;
  }
  ~Array() { release(); }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  Array(Array&& o) noexcept
      : exec_(std::move(o.exec_)),
        data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        owner_(std::exchange(o.owner_, true))
  {
  }
  Array& operator=(Array&& o) noexcept
  {
    if (this != &o) {
      release();
      exec_ = std::move(o.exec_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      owner_ = std::exchange(o.owner_, true);
    }
    return *this;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Executor& exec() const { return *exec_; }
  const ExecPtr& exec_ptr() const { return exec_; }

  std::vector<T> to_host() const
  {
    std::vector<T> h(static_cast<std::size_t>(size_));
    if (size_) exec_->copy_to_host(h.data(), data_, h.size() * sizeof(T));
    return h;
  }
  void copy_from_host(std::span<const T> host)
  {
    if (static_cast<size64_t>(host.size()) != size_) throw std::invalid_argument("Array::copy_from_host: size mismatch");
    if (size_) exec_->copy_from_host(data_, host.data(), host.size() * sizeof(T));
  }
  // Same-executor copy of all elements of `src` (sizes must match).
  void copy_from(const Array& src)
  {
    if (src.size_ != size_) throw std::invalid_argument("Array::copy_from: size mismatch");
    exec_->copy(data_, src.data_, static_cast<std::size_t>(size_) * sizeof(T));
  }

 private:
  void release() noexcept
  {
    if (data_ && owner_) exec_->deallocate(data_);
    data_ = nullptr;
    size_ = 0;
  }
  ExecPtr exec_;
  T* data_ = nullptr;
  size64_t size_ = 0;
  bool owner_ = true;
};

// A host vector copied into exec's memory (the element type deduced).
template <class T, class A>
Array<T> to_executor(const ExecPtr& exec, const std::vector<T, A>& host)
{
  return Array<T>(exec, std::span<const T>(host));
}

}  // namespace blockres
