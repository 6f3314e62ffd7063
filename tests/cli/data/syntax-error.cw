pack bad.syntax {
  version "0.1.0"
  engine ">= 0.1"
}

edge broken {
  link wakeup
  where from.tid == 
  strength weak
}
