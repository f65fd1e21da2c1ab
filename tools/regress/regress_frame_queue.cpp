#include "regress_frame_queue.h"

#include <algorithm>

namespace regress {

FrameQueue::FrameQueue(int threads, int depth, std::function<void(QueuedFrame&)> digest,
                       std::function<void(QueuedFrame&)> deliver)
    : threads_(std::max(1, threads)),
      digest_(std::move(digest)),
      deliver_(std::move(deliver)),
      slots_((size_t)std::max(1, depth)) {
  for (Slot& s : slots_) free_.push_back(&s);
}

FrameQueue::~FrameQueue() {
  drain();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

int FrameQueue::default_threads() {
  const int hw = (int)std::thread::hardware_concurrency();
  return std::min(4, std::max(2, hw / 4));
}

QueuedFrame* FrameQueue::acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  free_cv_.wait(lock, [this] { return !free_.empty(); });
  Slot* s = free_.back();
  free_.pop_back();
  return &s->frame;
}

void FrameQueue::submit(QueuedFrame* frame) {
  std::unique_lock<std::mutex> lock(mu_);
  Slot* slot = nullptr;
  for (Slot& s : slots_)
    if (&s.frame == frame) slot = &s;
  if (!slot) return;
  if (workers_.empty())
    for (int i = 0; i < threads_; i++) workers_.emplace_back([this] { work(); });
  todo_.push_back(slot);
  order_.push_back(slot);
  lock.unlock();
  work_cv_.notify_one();
}

void FrameQueue::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  free_cv_.wait(lock, [this] { return order_.empty() && !delivering_; });
}

void FrameQueue::work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stopping_ || !todo_.empty(); });
    if (todo_.empty()) return;  // stopping, and nothing left to digest
    Slot* s = todo_.front();
    todo_.pop_front();
    lock.unlock();
    digest_(s->frame);
    lock.lock();
    s->digested = true;
    deliver_ready(lock);
  }
}

// Delivers the digested frames at the head of the order. A worker that finds another one
// delivering leaves its frame to it: the delivering worker checks the head again (under mu_)
// after each frame, so it reaches every frame digested meanwhile.
void FrameQueue::deliver_ready(std::unique_lock<std::mutex>& lock) {
  if (delivering_) return;
  delivering_ = true;
  while (!order_.empty() && order_.front()->digested) {
    Slot* s = order_.front();
    lock.unlock();
    deliver_(s->frame);
    lock.lock();
    order_.pop_front();
    s->digested = false;
    free_.push_back(s);
    free_cv_.notify_all();
  }
  delivering_ = false;
  free_cv_.notify_all();
}

}  // namespace regress
