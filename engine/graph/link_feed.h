// The scan's link events on their way to the thread that pairs them: the builder's scan
// (builder_scan.cc) fills chunks of events in trace order and hands them over through a
// bounded queue, so that pairing links runs beside the scan on a second core and its
// candidates come out as a single thread makes them. Private to the graph builder's files.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/graph/expr_eval.h"
#include "engine/graph/link_pairing.h"
#include "trace/trace.h"

namespace cw::engine::build {

// Link events passed from the scan to the thread that pairs them, in chunks, in order.
class LinkFeed {
 public:
  struct Item {
    uint32_t link;
    EventCtx ctx;
    Pid pid;
    bool as_from, as_to;
  };

  LinkFeed(std::vector<std::unique_ptr<LinkPairer>>& pairers, std::vector<Candidate>& out);
  ~LinkFeed();

  void add(const Item& item) {
    chunk_.push_back(item);
    if (chunk_.size() == kChunk) publish();
  }

  // Waits until every event fed is paired; rethrows what pairing threw.
  void finish();

 private:
  static constexpr size_t kChunk = 4096;
  static constexpr size_t kMaxReady = 16;  // chunks in flight: the feed's memory is bounded

  void publish();
  void close();
  void consume();

  std::vector<std::unique_ptr<LinkPairer>>& pairers_;
  std::vector<Candidate>& out_;
  std::vector<Item> chunk_;  // being filled by the scan
  std::mutex mutex_;
  std::condition_variable work_, room_;
  std::deque<std::vector<Item>> ready_;
  std::vector<std::vector<Item>> spare_;
  bool closed_ = false;
  std::exception_ptr error_;  // the pairing thread's only
  std::thread thread_;
};

}  // namespace cw::engine::build
