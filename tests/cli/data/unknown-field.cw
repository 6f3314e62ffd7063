pack bad.field {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
}

edge stack.typo {
  link wakeup
  where from.stak matches "*lock*"
  strength weak
}
