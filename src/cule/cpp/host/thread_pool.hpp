// The CPU backend's worker threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cule {

// A fixed set of worker threads that run one job over task indices 0..n-1;
// the calling thread works too. Threads are created once: starting threads
// per step costs more than a frame of emulation. Tasks are handed out in
// runs of neighbours (about four per thread), so threads write apart in
// memory and claim work a few times per step, not once per environment.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return (int)workers_.size() + 1; }

  // A pool already running a job (another thread's call) runs this one on
  // the calling thread alone instead of mixing the two.
  void run(int tasks, const std::function<void(int)>& job) {
    std::unique_lock<std::mutex> owner(running_, std::try_to_lock);
    if (workers_.empty() || tasks <= 1 || !owner.owns_lock()) {
      for (int i = 0; i < tasks; ++i) job(i);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      tasks_ = tasks;
      chunk_ = std::max(1, tasks / (4 * size()));
      next_ = 0;
      busy_ = (int)workers_.size();
      ++generation_;
    }
    wake_.notify_all();
    drain();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
    job_ = nullptr;
  }

 private:
  void drain() {
    for (int begin = chunk_ * next_++; begin < tasks_; begin = chunk_ * next_++)
      for (int i = begin, end = std::min(tasks_, begin + chunk_); i < end; ++i) (*job_)(i);
  }
  void work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stopping_) return;
      }
      drain();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--busy_ == 0) done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_, running_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  std::atomic<int> next_{0};
  int tasks_ = 0, chunk_ = 1, busy_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
};

}  // namespace cule
