// A column of the trace (its events, its field values): either an owned std::vector or
// a view of memory someone else keeps alive, such as a memory-mapped cache file
// (docs/cache.md). A view costs nothing to set up: a 19 M-event trace's arrays are not
// copied (copying them into fresh vectors spent most of a read in first-touch page faults).
//
// The vector API the code base uses. Reads and writes through operator[] go to the view
// (a MAP_PRIVATE mapping made writable is copy-on-write: the file never changes); anything
// that changes the size first copies the view into the owned vector.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace cw {

template <class T>
class Column {
  static_assert(std::is_trivially_copyable_v<T>, "a view holds bytes as they are in memory");

 public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  Column() = default;
  Column(std::vector<T> v) : owned_(std::move(v)) { sync(); }  // NOLINT: as a vector
  Column(std::initializer_list<T> init) : owned_(init) { sync(); }
  Column(const Column& o) : owned_(o.begin(), o.end()) { sync(); }  // a copy owns
  Column(Column&& o) noexcept { *this = std::move(o); }
  Column& operator=(const Column& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Column& operator=(Column&& o) noexcept {
    if (this == &o) return *this;
    owned_ = std::move(o.owned_);
    keep_ = std::move(o.keep_);
    data_ = o.data_;
    size_ = o.size_;
    o.owned_.clear();
    o.keep_.reset();
    o.sync();
    if (!keep_) sync();
    return *this;
  }
  Column& operator=(std::vector<T> v) {
    keep_.reset();
    owned_ = std::move(v);
    sync();
    return *this;
  }

  // `size` elements at `data`, valid while `keep` lives.
  static Column view(std::shared_ptr<const void> keep, T* data, size_t size) {
    Column c;
    c.keep_ = std::move(keep);
    c.data_ = data;
    c.size_ = size;
    return c;
  }
  bool is_view() const { return keep_ != nullptr; }
  // The elements as a vector (moved out when owned; copied from a view).
  std::vector<T> take() && {
    own();
    std::vector<T> out = std::move(owned_);
    owned_.clear();
    sync();
    return out;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T* cbegin() const { return data_; }
  const T* cend() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& at(size_t i) {
    if (i >= size_) throw std::out_of_range("Column::at");
    return data_[i];
  }
  const T& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("Column::at");
    return data_[i];
  }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  size_t capacity() const { return is_view() ? size_ : owned_.capacity(); }

  void push_back(const T& v) {
    own();
    owned_.push_back(v);
    sync();
  }
  template <class... A>
  T& emplace_back(A&&... a) {
    own();
    owned_.emplace_back(std::forward<A>(a)...);
    sync();
    return owned_.back();
  }
  void pop_back() {
    own();
    owned_.pop_back();
    sync();
  }
  template <class It>
  T* insert(const T* pos, It first, It last) {
    const auto at = static_cast<size_t>(pos - data_);
    own();
    owned_.insert(owned_.begin() + static_cast<std::ptrdiff_t>(at), first, last);
    sync();
    return data_ + at;
  }
  T* insert(const T* pos, size_t n, const T& v) {
    const auto at = static_cast<size_t>(pos - data_);
    own();
    owned_.insert(owned_.begin() + static_cast<std::ptrdiff_t>(at), n, v);
    sync();
    return data_ + at;
  }
  T* insert(const T* pos, const T& v) { return insert(pos, 1, v); }
  T* erase(const T* first, const T* last) {
    const auto a = static_cast<size_t>(first - data_), b = static_cast<size_t>(last - data_);
    own();
    owned_.erase(owned_.begin() + static_cast<std::ptrdiff_t>(a),
                 owned_.begin() + static_cast<std::ptrdiff_t>(b));
    sync();
    return data_ + a;
  }
  void resize(size_t n) {
    own();
    owned_.resize(n);
    sync();
  }
  void resize(size_t n, const T& v) {
    own();
    owned_.resize(n, v);
    sync();
  }
  void reserve(size_t n) {
    own();
    owned_.reserve(n);
    sync();
  }
  void shrink_to_fit() {
    own();
    owned_.shrink_to_fit();
    sync();
  }
  template <class It>
  void assign(It first, It last) {
    std::vector<T> v(first, last);  // `first` may point into this column
    keep_.reset();
    owned_ = std::move(v);
    sync();
  }
  void assign(size_t n, const T& v) {
    keep_.reset();
    owned_.assign(n, v);
    sync();
  }
  void clear() {
    keep_.reset();
    owned_.clear();
    sync();
  }

  friend bool operator==(const Column& a, const Column& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  // A view becomes an owned copy before its size changes.
  void own() {
    if (!keep_) return;
    std::vector<T> v(data_, data_ + size_);
    keep_.reset();
    owned_ = std::move(v);
    sync();
  }
  void sync() {
    data_ = owned_.data();
    size_ = owned_.size();
  }

  std::vector<T> owned_;
  std::shared_ptr<const void> keep_;  // the view's memory; null when owned
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace cw
