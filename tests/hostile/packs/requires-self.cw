pack hostile.self_require {
  version "0.1.0"
  requires linux.kernel, hostile.self_require
}
