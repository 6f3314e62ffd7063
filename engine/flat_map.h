// A small open-addressing hash map (linear probing) for the builder's hot lookups: join
// keys of link pairing. std::unordered_map allocates a node per key and chases pointers;
// this keeps keys and values in two arrays.
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
      if (!used_[i]) return nullptr;
      if (keys_[i] == key) return &values_[i];
    }
  }

  // The value of `key`, default-constructed when new.
  Value& operator[](const Key& key) {
    if ((size_ + 1) * 2 > keys_.size()) rehash(keys_.size() * 2);
    size_t i = Hash{}(key)&mask_;
    for (; used_[i]; i = (i + 1) & mask_)
      if (keys_[i] == key) return values_[i];
    used_[i] = 1;
    keys_[i] = key;
    ++size_;
    return values_[i];
  }

  size_t size() const { return size_; }

  void clear() { *this = FlatMap(); }

 private:
  void rehash(size_t capacity) {
    std::vector<Key> keys(capacity);
    std::vector<Value> values(capacity);
    std::vector<uint8_t> used(capacity, 0);
    keys.swap(keys_);
    values.swap(values_);
    used.swap(used_);
    mask_ = capacity - 1;
    for (size_t i = 0; i < used.size(); ++i) {
      if (!used[i]) continue;
      size_t j = Hash{}(keys[i]) & mask_;
      while (used_[j]) j = (j + 1) & mask_;
      used_[j] = 1;
      keys_[j] = std::move(keys[i]);
      values_[j] = std::move(values[i]);
    }
  }

  std::vector<Key> keys_;
  std::vector<Value> values_;
  std::vector<uint8_t> used_;
  size_t size_ = 0;
  size_t mask_ = 0;
};

}  // namespace cw::engine
