pack hostile.unterminated_string {
  version "0.1.0"
  requires linux.kernel
}

edge e {
  link wakeup
  where "abc == 1
  strength weak
  kind hostile
}
