// The hand-over of link events from the builder's scan to the pairing thread (link_feed.h):
// full chunks go into a queue of at most kMaxReady, emptied chunks come back to be filled
// again, and an error in pairing waits for the scan to ask at finish().
#include "engine/graph/link_feed.h"

#include <utility>

namespace cw::engine::build {

LinkFeed::LinkFeed(std::vector<std::unique_ptr<LinkPairer>>& pairers, std::vector<Candidate>& out)
    : pairers_(pairers), out_(out) {
  chunk_.reserve(kChunk);
  thread_ = std::thread([this] { consume(); });
}

LinkFeed::~LinkFeed() {
  if (thread_.joinable()) {
    close();
    thread_.join();
  }
}

void LinkFeed::finish() {
  if (!chunk_.empty()) publish();
  close();
  thread_.join();
  if (error_) std::rethrow_exception(error_);
}

void LinkFeed::publish() {
  std::unique_lock lock(mutex_);
  room_.wait(lock, [&] { return ready_.size() < kMaxReady; });
  ready_.push_back(std::move(chunk_));
  if (!spare_.empty()) {
    chunk_ = std::move(spare_.back());
    spare_.pop_back();
  } else {
    chunk_ = {};
    chunk_.reserve(kChunk);
  }
  lock.unlock();
  work_.notify_one();
}

void LinkFeed::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  work_.notify_one();
}

void LinkFeed::consume() {
  std::vector<Item> chunk;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (!chunk.empty() || chunk.capacity() > 0) {
        chunk.clear();
        spare_.push_back(std::move(chunk));
        chunk = {};
      }
      work_.wait(lock, [&] { return !ready_.empty() || closed_; });
      if (ready_.empty()) return;
      chunk = std::move(ready_.front());
      ready_.pop_front();
    }
    room_.notify_one();
    if (error_) continue;  // drain: the scan finds out at finish()
    try {
      for (const Item& it : chunk)
        pairers_[it.link]->on_event(it.ctx, it.pid, out_, it.as_from, it.as_to);
    } catch (...) {
      error_ = std::current_exception();
    }
  }
}

}  // namespace cw::engine::build
