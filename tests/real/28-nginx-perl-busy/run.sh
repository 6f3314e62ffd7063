#!/usr/bin/env bash
# nginx with one worker process: the worker serves every connection from one event loop.
# An embedded Perl handler answers /busy after computing for 1.5 s inside that loop;
# client-b's request for a static file, sent 0.3 s after client-a's /busy, waits until the
# loop is free. Both clients are Debian's curl, run through links with their own names.
. "$(dirname "$0")/../lib.sh"
need nginx curl
perl_module=/usr/lib/nginx/modules/ngx_http_perl_module.so
[ -e "$perl_module" ] || die "nginx's perl module is not installed: run tests/real/install.sh"
port=$(free_port)
mkdir "$WORK/html" "$WORK/perl"
echo "static page" >"$WORK/html/index.html"
cat >"$WORK/perl/Busy.pm" <<'PERL'
package Busy;
use nginx;
use Time::HiRes qw(time);
sub handler {
  my $r = shift;
  my $start = time;
  my $n = 0;
  $n++ while time - $start < 1.5;
  $r->send_http_header("text/plain");
  $r->print("busy done\n");
  return OK;
}
1;
PERL
nginx_conf "$port" "load_module $perl_module;" \
  "perl_modules $WORK/perl; perl_require Busy.pm;" \
  "root $WORK/html; location = /busy { perl Busy::handler; }"
nginx -p "$WORK" -e "$WORK/error.log" -c "$WORK/nginx.conf" &
PIDS+=($!)
wait_port "$port" nginx "$WORK/error.log"
busy_then_static "http://127.0.0.1:$port/busy" "http://127.0.0.1:$port/index.html"
