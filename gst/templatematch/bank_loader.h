/* Loads template banks off the streaming thread: a request names what to load (a function that
 * decodes and prepares it); one worker thread runs the newest request only, and the streaming
 * thread takes the finished bank at its next frame. Two banks never mix: a bank is handed over
 * whole, and a request made while another loads is loaded after it (the newest wins). */
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "template_bank.h"

class BankLoader {
 public:
  /* Fills the bank, or returns a message saying what is wrong ("" on success). */
  using Load = std::function<std::string(cudaprep::TemplateBank *)>;

  BankLoader() = default;
  ~BankLoader();
  BankLoader(const BankLoader &) = delete;
  BankLoader &operator=(const BankLoader &) = delete;

  /* Queues request @id (ids grow); replaces a request not yet started. */
  void request(uint64_t id, Load load);
  /* The newest finished request after @have: TRUE with its id, bank and error. */
  bool take(uint64_t have, uint64_t *id, cudaprep::TemplateBank *bank, std::string *error);
  /* True while a request is queued or loading. */
  bool busy();
  /* Waits until nothing is queued or loading (tests, start). */
  void wait_idle();
  /* Joins the worker; pending requests are dropped. */
  void stop();

 private:
  void run();

  std::mutex lock_;
  std::condition_variable changed_;
  std::thread worker_;
  bool quit_ = false, loading_ = false;
  uint64_t pending_id_ = 0;
  Load pending_;
  uint64_t done_id_ = 0;
  cudaprep::TemplateBank done_bank_;
  std::string done_error_;
};
