pack hostile.dash-id {
  version "0.1.0"
}
