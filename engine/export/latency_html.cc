#include "engine/export/latency_html.h"

#include <string>

namespace cw::engine {
namespace {

// Text inside HTML elements and attributes.
std::string escape_html(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON inside <script>: a '<' only occurs inside strings, where \u003c means the same, so
// no function name from a trace can close the script element.
std::string script_json(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

// The page's style and script: the heat map is drawn from the embedded data, so the
// colouring and the noise threshold can change without another run.
constexpr const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
.summary { color: #555; margin-bottom: 1em; }
.controls { margin: .8em 0; display: flex; gap: 1.5em; align-items: center; }
table.heat { border-collapse: collapse; }
table.heat td, table.heat th { border: 1px solid #ccc; padding: 3px 6px; white-space: nowrap; }
table.heat th { background: #f3f3f3; text-align: left; }
td.cell { font-family: ui-monospace, monospace; font-size: 12px; max-width: 14em;
          overflow: hidden; text-overflow: ellipsis; }
td.cell .d { display: inline-block; min-width: 1.3em; font-weight: bold; }
td.cost { text-align: right; font-family: ui-monospace, monospace; }
.badge { font-size: 11px; padding: 1px 5px; border-radius: 3px; margin-left: .4em; }
.badge.new { background: #fde2b8; } .badge.vanished { background: #cfe0fb; }
.legend { display: flex; align-items: center; gap: .5em; margin: .6em 0 1.2em; font-size: 12px; }
.legend .bar { width: 240px; height: 12px; border: 1px solid #aaa; }
ul.tree { list-style: none; padding-left: 1.2em; margin: 0; }
ul.tree li { margin: 2px 0; font-family: ui-monospace, monospace; font-size: 12px; }
.muted { color: #777; }
)";

constexpr const char* kScript = R"(
const data = JSON.parse(document.getElementById('cw-data').textContent);
const tree = JSON.parse(document.getElementById('cw-tree').textContent);
const differential = 'base' in data;
const ms = ns => (ns / 1e6).toFixed(3) + ' ms';
const signedMs = ns => (ns >= 0 ? '+' : '') + ms(ns);

function summary(name, p) {
  return `${name}: ${p.stacks} stacks on ${p.threads} thread${p.threads === 1 ? '' : 's'}, ${p.frames} frames ` +
         `(${p.frames_without_symbol} without a symbol), ${p.contexts} contexts, ` +
         `${p.functions} functions`;
}

// Log-scale heat: 0 is white, 1 the hottest; red for time spent, blue for time saved.
function heat(t, negative) {
  t = Math.max(0, Math.min(1, t));
  const [r, g, b] = negative ? [255 - 190 * t, 255 - 120 * t, 255]
                             : [255, 255 - 200 * t, 255 - 255 * Math.min(1, 2 * t)];
  return `rgb(${r | 0}, ${g | 0}, ${b | 0})`;
}

function scale(values, normalised) {
  const abs = values.map(Math.abs).filter(v => v > 0);
  // Absolute: 1 us to 10 s on every page. Normalised: this page's smallest to largest.
  const lo = normalised && abs.length ? Math.min(...abs) : 1e3;
  const hi = normalised && abs.length ? Math.max(...abs) : 1e10;
  return v => {
    const a = Math.abs(v);
    if (a <= 0) return 0;
    if (hi <= lo) return 1;
    return (Math.log10(a) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo));
  };
}

function draw() {
  const normalised = document.getElementById('normalised').checked;
  const threshold = 1e6 * (parseFloat(document.getElementById('threshold').value) || 0);
  const rows = data.contexts.filter(c => Math.abs(c.cost_ns) >= threshold);
  const t = scale(rows.flatMap(c => c.frames.map(f => f.cost_ns)), normalised);
  const width = Math.max(0, ...rows.map(c => c.frames.length));
  const table = document.getElementById('heat');
  table.replaceChildren();
  const head = table.insertRow();
  for (const h of ['#', differential ? 'change' : 'cost'])
    head.appendChild(Object.assign(document.createElement('th'), {textContent: h}));
  // Hot first: the costliest function, then its callers outwards, then what it called. A
  // deep stack laid out outermost first put the hot function far off to the right.
  const fh = Object.assign(document.createElement('th'), {
    textContent: 'the costliest function (0), its callers outwards, then its callees ' +
                 '(the number: frames from the costliest)'});
  fh.colSpan = width;
  head.appendChild(fh);
  for (const c of rows) {
    const row = table.insertRow();
    row.className = 'context';
    row.dataset.rank = c.rank;
    const rank = row.insertCell();
    rank.textContent = c.rank;
    if (c.presence && c.presence !== 'both') {
      const b = document.createElement('span');
      b.className = 'badge ' + c.presence;
      b.textContent = c.presence === 'new' ? 'new' : 'vanished';
      rank.appendChild(b);
    }
    const cost = row.insertCell();
    cost.className = 'cost';
    cost.textContent = differential ? signedMs(c.cost_ns) : ms(c.cost_ns);
    const hotFirst = [...c.frames.slice(0, c.costliest + 1).reverse(),
                      ...c.frames.slice(c.costliest + 1)];
    for (const f of hotFirst) {
      const cell = row.insertCell();
      cell.className = 'cell';
      cell.dataset.function = f.function;
      cell.dataset.distance = f.distance;
      cell.style.background = heat(t(f.cost_ns), f.cost_ns < 0);
      const d = document.createElement('span');
      d.className = 'd';
      d.textContent = f.distance;
      cell.append(d, ' ', f.function);
      cell.title = `${f.function}\nown ${ms(f.own_ns)}` +
                   (differential ? `, base ${ms(f.base_own_ns)}, change ${signedMs(f.cost_ns)}`
                                 : '') + `\n${f.instances} instance(s)`;
    }
    for (let i = c.frames.length; i < width; ++i) row.insertCell();
  }
  document.getElementById('shown').textContent =
      `${rows.length} of ${data.contexts.length} contexts shown`;
  const bar = document.getElementById('bar');
  bar.style.background = `linear-gradient(to right, ${heat(0)}, ${heat(0.5)}, ${heat(1)})`;
  const abs = rows.flatMap(c => c.frames.map(f => Math.abs(f.cost_ns))).filter(v => v > 0);
  document.getElementById('lo').textContent = normalised && abs.length ? ms(Math.min(...abs)) : '0.001 ms';
  document.getElementById('hi').textContent = normalised && abs.length ? ms(Math.max(...abs)) : '10000 ms';
}

function drawTree(nodes, into) {
  const ul = document.createElement('ul');
  ul.className = 'tree';
  for (const n of nodes) {
    const li = document.createElement('li');
    let text = `${n.function}  own ${ms(n.own_ns)}, total ${ms(n.total_ns)}, ${n.instances} instance(s)`;
    if (differential) text += `, base own ${ms(n.base_own_ns)}`;
    let label = li;
    if (n.children.length) {
      const det = document.createElement('details');
      det.open = true;
      label = document.createElement('summary');
      det.appendChild(label);
      drawTree(n.children, det);
      li.appendChild(det);
    }
    label.prepend(text);
    if (n.presence && n.presence !== 'both') {
      const b = document.createElement('span');
      b.className = 'badge ' + n.presence;
      b.textContent = n.presence;
      label.appendChild(b);
    }
    ul.appendChild(li);
  }
  into.appendChild(ul);
}

document.getElementById('summary').textContent = differential
    ? summary('base', data.base) + '; ' + summary('buggy', data.buggy)
    : summary('trace', data.trace);
document.getElementById('mode').textContent = data.mode;
document.getElementById('threshold').value = data.threshold_ns / 1e6;
document.getElementById('normalised').addEventListener('change', draw);
document.getElementById('threshold').addEventListener('input', draw);
draw();
drawTree(tree, document.getElementById('tree'));
)";

}  // namespace

std::string latency_html(const nlohmann::json& ranking, const nlohmann::json& tree,
                         std::string_view title) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>causeway latency: " + escape_html(title) + "</title>\n";
  out += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += "<h1>causeway latency: " + escape_html(title) + "</h1>\n";
  out += "<div class=\"summary\" id=\"summary\"></div>\n";
  out +=
      "<div>Costliest calling contexts (<span id=\"mode\"></span> inference), "
      "one row per context; each cell a function coloured by its own time "
      "(log scale; when comparing, by its change: red slower, blue faster).</div>\n";
  out +=
      "<div class=\"controls\">"
      "<label><input type=\"checkbox\" id=\"normalised\"> normalised colouring</label>"
      "<label>noise threshold <input type=\"number\" id=\"threshold\" min=\"0\" "
      "step=\"0.1\" style=\"width:6em\"> ms</label>"
      "<span id=\"shown\" class=\"muted\"></span></div>\n";
  out +=
      "<div class=\"legend\"><span id=\"lo\"></span><div class=\"bar\" id=\"bar\"></div>"
      "<span id=\"hi\"></span></div>\n";
  out += "<table class=\"heat\" id=\"heat\"></table>\n";
  out += "<h2>Performance-annotated calling-context tree of these contexts</h2>\n";
  out += "<div id=\"tree\"></div>\n";
  out += "<script type=\"application/json\" id=\"cw-data\">" + script_json(ranking) + "</script>\n";
  out += "<script type=\"application/json\" id=\"cw-tree\">" + script_json(tree) + "</script>\n";
  out += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace cw::engine
