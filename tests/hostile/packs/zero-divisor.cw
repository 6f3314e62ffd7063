pack hostile.zero_divisor {
  version "0.1.0"
  requires linux.kernel
}

edge e {
  link wakeup
  where to.ts % 0 == 1
  strength weak
  kind hostile
}
