pack hostile.bad_utf8 {
  version "0.1.0"
  requires linux.kernel
}

edge e {
  link wakeup
  where from.syscall.name == "ÿşÀ€"
  strength weak
  kind hostile
}
