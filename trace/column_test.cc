#include "trace/column.h"

#include <doctest/doctest.h>

#include <memory>
#include <vector>

using cw::Column;

namespace {

// A view over `backing`, kept alive by the returned column (and noting when released).
Column<int> view_of(std::vector<int>& backing, std::shared_ptr<bool> released) {
  std::shared_ptr<const void> keep(new int(0), [released](const void* p) {
    *released = true;
    delete static_cast<const int*>(p);
  });
  return Column<int>::view(keep, backing.data(), backing.size());
}

}  // namespace

TEST_CASE("an owned column behaves as its vector") {
  Column<int> c = std::vector<int>{1, 2, 3};
  CHECK_FALSE(c.is_view());
  c.push_back(4);
  const std::vector<int> more{5, 6};
  c.insert(c.end(), more.begin(), more.end());
  CHECK(c.size() == 6);
  CHECK(c.back() == 6);
  c.resize(2);
  CHECK(std::vector<int>(c.begin(), c.end()) == std::vector<int>{1, 2});
  c.assign(c.begin() + 1, c.end());  // from itself
  CHECK(std::vector<int>(c.begin(), c.end()) == std::vector<int>{2});
  c.clear();
  CHECK(c.empty());
}

TEST_CASE("a view reads and writes its memory until its size changes") {
  std::vector<int> backing{10, 20, 30};
  auto released = std::make_shared<bool>(false);
  {
    Column<int> c = view_of(backing, released);
    CHECK(c.is_view());
    CHECK(c.data() == backing.data());
    CHECK(c[1] == 20);
    c[1] = 21;  // in place (a private mapping copies the page on write)
    CHECK(backing[1] == 21);

    Column<int> copy = c;  // a copy owns its elements
    CHECK_FALSE(copy.is_view());
    copy[0] = 11;
    CHECK(backing[0] == 10);

    c.push_back(40);  // copies first: the backing memory is left as it was
    CHECK_FALSE(c.is_view());
    CHECK(*released);
    CHECK(backing.size() == 3);
    CHECK(std::vector<int>(c.begin(), c.end()) == std::vector<int>{10, 21, 30, 40});
  }
  *released = false;
  {
    Column<int> c = view_of(backing, released);
    Column<int> moved = std::move(c);
    CHECK(moved.is_view());
    CHECK(c.empty());
    CHECK_FALSE(*released);
    std::vector<int> v = std::move(moved).take();
    CHECK(v == std::vector<int>{10, 21, 30});
    CHECK(*released);
  }
  *released = false;
  {
    Column<int> c = view_of(backing, released);
    c = std::vector<int>{7};
    CHECK(*released);
    CHECK_FALSE(c.is_view());
    CHECK(c.size() == 1);
  }
}
