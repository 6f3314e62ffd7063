pack hostile.big_literal {
  version "0.1.0"
  requires linux.kernel
}

edge e {
  link wakeup
  where to.ts > 99999999999999999999999
  strength weak
  kind hostile
}
