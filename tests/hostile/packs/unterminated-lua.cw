pack hostile.unterminated_lua {
  version "0.1.0"
  requires linux.kernel
}
lua [[
function f() end
