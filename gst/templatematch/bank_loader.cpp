#include "bank_loader.h"

#include <utility>

BankLoader::~BankLoader() { stop(); }

void BankLoader::request(uint64_t id, Load load) {
  std::lock_guard<std::mutex> guard(lock_);
  pending_id_ = id;
  pending_ = std::move(load);
  if (!worker_.joinable()) {
    quit_ = false;
    worker_ = std::thread([this] { run(); });
  }
  changed_.notify_all();
}

bool BankLoader::take(uint64_t have, uint64_t *id, cudaprep::TemplateBank *bank, std::string *error) {
  std::lock_guard<std::mutex> guard(lock_);
  if (done_id_ <= have) return false;
  *id = done_id_;
  *bank = std::move(done_bank_);
  *error = std::move(done_error_);
  done_bank_ = cudaprep::TemplateBank();
  done_error_.clear();
  return true;
}

bool BankLoader::busy() {
  std::lock_guard<std::mutex> guard(lock_);
  return loading_ || pending_;
}

void BankLoader::wait_idle() {
  std::unique_lock<std::mutex> guard(lock_);
  changed_.wait(guard, [this] { return (!loading_ && !pending_) || quit_; });
}

void BankLoader::stop() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    quit_ = true;
    pending_ = nullptr;
    changed_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

void BankLoader::run() {
  std::unique_lock<std::mutex> guard(lock_);
  for (;;) {
    changed_.wait(guard, [this] { return quit_ || pending_; });
    if (quit_) return;
    Load load = std::move(pending_);
    pending_ = nullptr;
    const uint64_t id = pending_id_;
    loading_ = true;
    guard.unlock();
    cudaprep::TemplateBank bank;
    std::string error = load(&bank);
    guard.lock();
    loading_ = false;
    /* A newer request finished meanwhile? Ids grow, so keep the newest only. */
    if (id > done_id_) {
      done_id_ = id;
      done_bank_ = std::move(bank);
      done_error_ = std::move(error);
    }
    changed_.notify_all();
  }
}
