// A small open-addressing hash map (linear probing) for the builder's hot lookups: join
// keys of link pairing. std::unordered_map allocates a node per key and chases pointers;
// this keeps each key beside its value in one array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cw::engine {

template <class Key, class Value, class Hash>
class FlatMap {
 public:
  FlatMap() { rehash(16); }

  Value* find(const Key& key) {
    for (size_t i = Hash{}(key)&mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }

  // The value of `key`, default-constructed when new.
  Value& operator[](const Key& key) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    size_t i = Hash{}(key)&mask_;
    for (; slots_[i].used; i = (i + 1) & mask_)
      if (slots_[i].key == key) return slots_[i].value;
    Slot& s = slots_[i];
    s.used = true;
    s.key = key;
    ++size_;
    return s.value;
  }

  size_t size() const { return size_; }

  void clear() { *this = FlatMap(); }

 private:
  // Key, value and flag side by side: a probe of a large map touches one cache line.
  struct Slot {
    Key key{};
    Value value{};
    bool used = false;
  };

  void rehash(size_t capacity) {
    std::vector<Slot> slots(capacity);
    slots.swap(slots_);
    mask_ = capacity - 1;
    for (Slot& old : slots) {
      if (!old.used) continue;
      size_t j = Hash{}(old.key) & mask_;
      while (slots_[j].used) j = (j + 1) & mask_;
      slots_[j] = std::move(old);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
};

}  // namespace cw::engine
