pack hostile.bom {
  version "0.1.0"
  requires linux.kernel
}
