pack hostile.a {
  version "0.1.0"
  requires hostile.b
}
