// The CPU backend's worker threads.
#pragma once

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cule {

// A fixed set of worker threads that run one job over task indices 0..n-1;
// the calling thread works too. Threads are created once: starting threads
// per step costs more than a frame of emulation. Tasks are handed out in
// runs of neighbours (about four per thread), so threads write apart in
// memory and claim work a few times per step, not once per environment.
//
// The pool keeps an account of where its threads' time went (Stats): a few
// clock reads per thread per job, so it stays on. It is how a machine with
// many cores shows whether threads wait (to be woken, or for the slowest
// one) or work more slowly (memory, caches), which no 2-core run can.
//
// A fork's child inherits the pool but none of its threads, and its locks
// and condition variables as they were: joining, waking or destroying them
// there could wait forever. The child runs every job on the calling thread
// and, when the pool goes, leaves the parent's threads and locks untouched.
class ThreadPool {
 public:
  // Sums over jobs, in nanoseconds. A job's threads each spend `wall` in it:
  // waking after the job starts, working (claiming and running tasks), then
  // waiting for the last thread, so threads x wall = wake + busy + the wait.
  struct Stats {
    int64_t jobs = 0;      // jobs run (on the workers, or on the caller alone)
    int64_t tasks = 0;     // task indices run
    int64_t wall = 0;      // from a job's start until its caller returns
    int64_t capacity = 0;  // threads x wall, summed over jobs
    int64_t wake = 0;      // from a job's start until each thread starts on it
    int64_t busy = 0;      // each thread's time working
    int64_t cpu = 0;       // the CPU time in that (below busy when threads outnumber cores)
    int64_t critical = 0;  // from a job's start until its last thread stops working
  };

  explicit ThreadPool(int threads) : owner_(getpid()) {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  ~ThreadPool() {
    if (forked()) {  // the parent's threads and locks, kept as they are (never freed)
      static_cast<void>(new std::vector<std::thread>(std::move(workers_)));
      static_cast<void>(sync_.release());
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return (int)workers_.size() + 1; }
  // Whether this process is a fork's child of the one that made the pool.
  bool forked() const { return getpid() != owner_; }

  // A pool already running a job (another thread's call) runs this one on
  // the calling thread alone instead of mixing the two.
  void run(int tasks, const std::function<void(int)>& job) {
    if (forked()) {
      for (int i = 0; i < tasks; ++i) job(i);
      return;
    }
    const int64_t start = now();
    std::unique_lock<std::mutex> owner(running_, std::try_to_lock);
    if (workers_.empty() || tasks <= 1 || !owner.owns_lock()) {
      const int64_t cpu = thread_cpu();
      for (int i = 0; i < tasks; ++i) job(i);
      account(tasks, now() - start, thread_cpu() - cpu, 1);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      job_start_ = start;
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
    account(tasks, now() - start, 0, size());
  }

  Stats stats() const {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    return stats_;
  }
  void clear_stats() {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    stats_ = Stats{};
  }

 private:
  static int64_t now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static int64_t thread_cpu() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
  }
  // A whole job's figures (the caller's, at its end). A job the caller ran
  // alone is all work (`cpu` its CPU time); the threads of a shared job have
  // added their own work in drain(), and the last to stop set job_finish_.
  void account(int tasks, int64_t wall, int64_t cpu, int threads) {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    stats_.jobs += 1;
    stats_.tasks += tasks;
    stats_.wall += wall;
    stats_.capacity += wall * threads;
    if (threads == 1) {
      stats_.critical += wall;
      stats_.busy += wall;
      stats_.cpu += cpu;
    } else {
      stats_.critical += job_finish_;
      job_finish_ = 0;
    }
  }
  // Every thread of a shared job, the caller included.
  void drain() {
    const int64_t start = now(), cpu = thread_cpu();
    for (int begin = chunk_ * next_++; begin < tasks_; begin = chunk_ * next_++)
      for (int i = begin, end = std::min(tasks_, begin + chunk_); i < end; ++i) (*job_)(i);
    const int64_t finish = now(), used = thread_cpu() - cpu;
    std::lock_guard<std::mutex> lock(stats_mutex_);
    job_finish_ = std::max(job_finish_, finish - job_start_);
    stats_.wake += start - job_start_;
    stats_.busy += finish - start;
    stats_.cpu += used;
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

  struct Sync {
    std::mutex stats, jobs, running;
    std::condition_variable wake, done;
  };
  const pid_t owner_;
  std::vector<std::thread> workers_;
  std::unique_ptr<Sync> sync_ = std::make_unique<Sync>();
  std::mutex& stats_mutex_ = sync_->stats;
  Stats stats_;
  int64_t job_start_ = 0;
  int64_t job_finish_ = 0;  // the latest a thread of the running job stopped, from its start (stats_mutex_)
  std::mutex &mutex_ = sync_->jobs, &running_ = sync_->running;
  std::condition_variable &wake_ = sync_->wake, &done_ = sync_->done;
  const std::function<void(int)>* job_ = nullptr;
  std::atomic<int> next_{0};
  int tasks_ = 0, chunk_ = 1, busy_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
};

}  // namespace cule
