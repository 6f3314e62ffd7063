pack bad.duplicate {
  version "0.1.0"
  engine ">= 0.1"
}

split wait {
  at syscall_enter
  where name == "read"
}

split wait {
  at syscall_enter
  where name == "poll"
}
