pack hostile.b {
  version "0.1.0"
  requires hostile.a
}
