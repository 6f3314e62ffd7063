// A small deterministic random generator: the same seed gives the same trace on every
// machine and standard library (std:: distributions are not portable across them).
#pragma once

#include <cmath>
#include <cstdint>

namespace cw::bench {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull) {}

  uint64_t next() {  // splitmix64
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  uint64_t between(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }
  size_t index(size_t n) { return static_cast<size_t>(next() % n); }
  bool chance(double p) { return unit() < p; }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Roughly exponential with the given mean (inverse transform, capped at 8 means).
  uint64_t around(uint64_t mean) {
    double u = unit();
    double x = u > 0.99966 ? 8.0 : -std::log(1.0 - u);
    return 1 + static_cast<uint64_t>(x * static_cast<double>(mean));
  }

 private:
  uint64_t state_;
};

}  // namespace cw::bench
