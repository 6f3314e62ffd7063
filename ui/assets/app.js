// causeway ui's page: polls the server for the diagnosis's state (api/state, which answers
// when something changed, or after a while with the same), shows the question being asked
// and sends the option clicked (api/answer), then shows the root cause, the report and the
// timeline. Every string from the trace goes in as text (textContent, SVG text nodes):
// names may hold markup.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
let version = 0;
let shownQuestion = 0;
let state = {};

function $(id) { return document.getElementById(id); }

// An element with attributes and children (strings become text nodes, never markup).
function el(tag, attrs, ...children) {
  const e = tag.startsWith('svg:') ? document.createElementNS(SVG, tag.slice(4))
                                   : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null && v !== false) e.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

function setStatus(phase, text) {
  const s = $('status');
  s.dataset.phase = phase;
  s.textContent = text;
}

function seconds(s) { return typeof s === 'number' ? s.toFixed(6) + ' s' : '?'; }

function showQuestion(q) {
  const section = $('question-section');
  if (!q) { section.hidden = true; return; }
  section.hidden = false;
  if (q.id === shownQuestion) return;
  shownQuestion = q.id;
  $('question-number').textContent = String(q.number);
  $('question-kind').textContent = q.kind;
  $('question-text').textContent = q.text;
  $('so-far').textContent = (q.context && q.context.so_far) || '';
  $('question-context').hidden = !(q.context && q.context.so_far);
  $('help').textContent = q.help || '';
  const list = $('options');
  list.replaceChildren();
  q.options.forEach((o, i) => {
    const button = el('button', { type: 'button', class: 'option', 'data-index': i }, o.label);
    button.addEventListener('click', () => answer(q.id, i, list));
    const li = el('li', { class: i === 0 ? 'option-item best' : 'option-item' }, button,
                  i === 0 ? el('span', { class: 'best-tag' }, 'best scored') : null);
    if (o.evidence) li.append(el('pre', { class: 'evidence' }, o.evidence));
    list.append(li);
  });
  section.scrollIntoView({ block: 'nearest' });
}

async function answer(id, option, list) {
  for (const b of list.querySelectorAll('button')) b.disabled = true;
  const r = await fetch('api/answer', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ id, option }),
  });
  if (!r.ok) {
    const why = await r.json().catch(() => ({}));
    $('message').textContent = 'answer not taken: ' + (why.message || r.status);
    for (const b of list.querySelectorAll('button')) b.disabled = false;
  }
}

function threadName(x) {
  return `process ${x.process_comm || x.comm || '?'} ${x.pid}, thread ${x.comm || '?'} ${x.tid}`;
}

function showResult(s) {
  const section = $('result-section');
  const box = $('root-cause');
  if (s.phase === 'done' && s.report) {
    section.hidden = false;
    box.replaceChildren();
    const causes = s.report.json.root_causes || [];
    if (causes.length === 0) box.append(el('p', {}, 'no root cause found (see the notes in the report)'));
    causes.forEach((rc, i) => {
      box.append(el('div', { class: 'cause', 'data-tid': rc.tid, 'data-pid': rc.pid, 'data-kind': rc.kind },
        el('div', { class: 'headline' }, (i ? `${i + 1}. ` : '') + `${rc.comm} ${rc.tid} (process ${rc.pid})`),
        el('div', { class: 'what' }, rc.what || ''),
        el('div', { class: 'note' }, `${rc.kind}, ${seconds(rc.start_s)} to ${seconds(rc.end_s)}`)));
    });
    const hang = s.report.json.hang;
    if (hang) box.append(el('p', { class: 'note', id: 'hang' },
      `the hang: ${hang.comm} ${hang.tid} (${hang.kind}) from ${seconds(hang.start_s)} to ${seconds(hang.end_s)}`));
  } else if (s.phase === 'no_hang' || s.phase === 'error') {
    section.hidden = false;
    box.replaceChildren(el('p', {}, s.phase === 'no_hang' ? 'No hang found.' : 'The diagnosis failed.'));
  } else {
    section.hidden = true;
  }
  $('message').textContent = [s.message || '', ...(s.notes || [])].filter(Boolean).join('\n');
}

function showReport(s) {
  if (!s.report) { $('report-section').hidden = true; $('answers-section').hidden = true; return; }
  $('report-section').hidden = false;
  $('report').textContent = s.report.text;
  $('report-json').textContent = JSON.stringify(s.report.json, null, 2);
  const answers = $('answers');
  answers.replaceChildren();
  for (const q of s.report.json.queries || []) {
    answers.append(el('li', {}, el('span', { class: 'kind' }, q.kind), ' ', q.question,
      el('br'), '→ ', el('strong', {}, q.chosen), el('span', { class: 'note' }, ` (${q.source})`)));
  }
  if ((s.report.json.queries || []).length === 0) answers.append(el('li', {}, 'no question was asked'));
  $('answers-section').hidden = false;
  $('save').title = s.save_to ? `writes the pack into ${s.save_to}` : 'downloads the pack (pack.cw)';
}

let latencyShown = false;
function showLatency(l) {
  if (!l || latencyShown) return;
  if (l.available) {
    latencyShown = true;
    $('latency-note').textContent = 'the costliest calling contexts, inferred from the stacks on the trace\'s events (causeway latency)';
    $('latency-link').hidden = false;
    $('latency-frame').replaceChildren(el('iframe', { src: 'latency.html', title: 'latency heat map', sandbox: 'allow-scripts' }));
  } else {
    $('latency-note').textContent = l.note || 'none';
  }
}

// The timeline: one row per thread on (or next to) the causal path, its segments as bars,
// causal edges as arrows from the cause's time to the effect's. The wheel zooms around
// the pointer; "fit" shows all; during a question it starts on what the question is about.
let timeline = null;   // the model drawn
let view = null;       // [from, to] in the model's ns

function showTimeline(t) {
  if (!t) {
    timeline = null;
    $('timeline-note').textContent = state.phase === 'done' ? '(none)' : '(drawn once the path is known)';
    $('timeline').replaceChildren();
    return;
  }
  if (timeline && timeline.key === t.key) return;
  timeline = t;
  $('timeline-note').textContent = state.phase === 'question'
    ? '(found so far: the segment asked about is outlined, the options\' segments and arrows numbered)'
    : '(the causal path, its root cause and hang, and the segments one edge away)';
  view = questionView(t) || [t.start_ns, t.end_ns];
  drawTimeline();
}

// The stretch of time the question's marked segments and arrows cover, with some room.
function questionView(t) {
  let lo = Infinity, hi = -Infinity;
  for (const s of t.slices) if (s.subject || s.option) { lo = Math.min(lo, s.start_ns); hi = Math.max(hi, s.end_ns); }
  for (const f of t.flows) if (f.option) { lo = Math.min(lo, f.from_ns, f.to_ns); hi = Math.max(hi, f.from_ns, f.to_ns); }
  if (!(hi > lo)) return null;
  const pad = (hi - lo) * 0.3 + 1;
  return [Math.max(t.start_ns, lo - pad), Math.min(t.end_ns, hi + pad)];
}

function drawTimeline() {
  const t = timeline, box = $('timeline');
  const labelW = 230, rowH = 30, barH = 20, top = 22;
  const width = Math.max(700, box.clientWidth || 1000);
  const plotW = width - labelW - 20;
  const [v0, v1] = view;
  const span = Math.max(1, v1 - v0);
  const x = ns => labelW + ((ns - v0) / span) * plotW;
  const left = labelW, right = labelW + plotW;
  const height = top + t.tracks.length * rowH + 10;
  const svg = el('svg:svg', { width, height, viewBox: `0 0 ${width} ${height}`, id: 'timeline-svg' });
  svg.append(el('svg:defs', {},
    el('svg:clipPath', { id: 'plot' }, el('svg:rect', { x: left, y: 0, width: plotW + 10, height })),
    el('svg:marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' },
      el('svg:path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#5b6474' })),
    el('svg:marker', { id: 'arrow-path', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 5, markerHeight: 5, orient: 'auto-start-reverse' },
      el('svg:path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#c0392b' }))));
  const rowY = i => top + i * rowH;
  t.tracks.forEach((tr, i) => {
    svg.append(el('svg:rect', { class: i % 2 ? 'row odd' : 'row', x: 0, y: rowY(i), width, height: rowH }));
    svg.append(el('svg:text', { class: 'track-label', x: 6, y: rowY(i) + 13, 'data-tid': tr.tid }, `${tr.name || '?'} ${tr.tid}`));
    svg.append(el('svg:text', { class: 'process-label', x: 6, y: rowY(i) + 25 }, `process ${tr.process || '?'} ${tr.pid}`));
  });
  const plot = el('svg:g', { 'clip-path': 'url(#plot)' });
  svg.append(plot);
  // Time axis: about eight ticks, in seconds since the trace started.
  const step = niceStep(span / 8);
  for (let v = Math.ceil(v0 / step) * step; v <= v1; v += step) {
    plot.append(el('svg:line', { class: 'tick', x1: x(v), x2: x(v), y1: top - 4, y2: height - 10 }));
    plot.append(el('svg:text', { class: 'axis', x: x(v) + 2, y: top - 8 }, secondsLabel((v - t.trace_start_ns) / 1e9, step)));
  }
  t.slices.forEach((s, i) => {
    const x0 = x(s.start_ns), w = Math.max(1.5, x(s.end_ns) - x0);
    const cls = ['slice', s.on_path && 'on-path', s.root_cause && 'root-cause', s.hang && 'hang',
                 s.subject && 'subject', s.option && 'option'].filter(Boolean).join(' ');
    const r = el('svg:rect', { class: cls, x: x0, y: rowY(s.track) + (rowH - barH) / 2, width: w, height: barH,
                               'data-segment': s.segment, 'data-index': i },
      el('svg:title', {}, `${s.name}\n${s.detail || ''}\n${((s.start_ns - t.trace_start_ns) / 1e9).toFixed(6)} s to ${((s.end_ns - t.trace_start_ns) / 1e9).toFixed(6)} s`));
    r.addEventListener('click', () => {
      for (const o of svg.querySelectorAll('.slice.selected')) o.classList.remove('selected');
      r.classList.add('selected');
      $('slice-info').textContent = `${t.tracks[s.track].name || '?'} ${t.tracks[s.track].tid}: ${s.name} — ${s.detail || ''}`;
    });
    plot.append(r);
    // The label goes on the part of the bar in view.
    const shownFrom = Math.max(x0, left), shownTo = Math.min(x0 + w, right);
    if (s.option) {
      plot.append(el('svg:text', { class: 'option-label', x: (shownFrom + shownTo) / 2, y: rowY(s.track) + 9, 'text-anchor': 'middle' }, String(s.option)));
    }
    if (shownTo - shownFrom > 40) {
      const light = s.root_cause || s.hang;
      plot.append(el('svg:text', { class: light ? 'slice-label light' : 'slice-label', x: shownFrom + 3, y: rowY(s.track) + rowH / 2 + 4 },
        clip(s.name, Math.floor((shownTo - shownFrom - 6) / 6.5))));
    }
  });
  for (const f of t.flows) {
    const a = t.slices[f.from_slice], b = t.slices[f.to_slice];
    if (!a || !b) continue;
    const x1 = x(f.from_ns), y1 = rowY(a.track) + rowH / 2, x2 = x(f.to_ns), y2 = rowY(b.track) + rowH / 2;
    const mid = (y1 + y2) / 2;
    plot.append(el('svg:path', { class: f.on_path ? 'flow on-path' : 'flow', d: `M ${x1} ${y1} C ${x1} ${mid}, ${x2} ${mid}, ${x2} ${y2}`,
                                 'marker-end': f.on_path ? 'url(#arrow-path)' : 'url(#arrow)', 'data-edge': f.edge },
      el('svg:title', {}, `${f.kind} (${f.strength})`)));
    if (f.option) {
      plot.append(el('svg:text', { class: 'option-label flow-option', x: (x1 + x2) / 2 + 4, y: mid }, String(f.option)));
    }
  }
  for (const m of t.instants) {
    const cx = x(m.ts), cy = rowY(m.track) + 4;
    plot.append(el('svg:path', { class: 'instant', d: `M ${cx} ${cy - 4} L ${cx + 4} ${cy} L ${cx} ${cy + 4} L ${cx - 4} ${cy} z` },
      el('svg:title', {}, m.name)));
  }
  svg.addEventListener('wheel', e => {
    e.preventDefault();
    const rect = svg.getBoundingClientRect();
    const at = v0 + ((e.clientX - rect.left - left) / plotW) * span;
    const factor = e.deltaY > 0 ? 1.25 : 0.8;
    zoom(at, factor);
  }, { passive: false });
  box.replaceChildren(svg);
  const fit = $('timeline-fit');
  fit.disabled = v0 <= t.start_ns && v1 >= t.end_ns;
  $('timeline-question').hidden = !questionView(t);
}

function zoom(at, factor) {
  const t = timeline;
  const full = t.end_ns - t.start_ns;
  let w = Math.min(full, Math.max(1000, (view[1] - view[0]) * factor));
  let a = at - (at - view[0]) * (w / (view[1] - view[0]));
  a = Math.max(t.start_ns, Math.min(a, t.end_ns - w));
  view = [a, a + w];
  drawTimeline();
}

// Seconds with as many decimals as the ticks' step needs.
function secondsLabel(s, stepNs) {
  const decimals = Math.min(9, Math.max(3, Math.ceil(-Math.log10(stepNs / 1e9))));
  return s.toFixed(decimals) + ' s';
}

function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

function clip(s, n) { return s.length <= n ? s : s.slice(0, Math.max(1, n - 1)) + '…'; }

function render(s) {
  state = s;
  $('trace').textContent = s.trace || '';
  const phases = {
    diagnosing: 'diagnosing…', question: 'waiting for your answer', done: 'done',
    no_hang: 'no hang found', error: 'failed',
  };
  setStatus(s.phase || '', phases[s.phase] || s.phase || '');
  showQuestion(s.phase === 'question' ? s.question : null);
  showResult(s);
  showReport(s);
  showTimeline(s.timeline);
  showLatency(s.latency);
}

async function poll() {
  for (;;) {
    try {
      const r = await fetch(`api/state?since=${version}`);
      if (!r.ok) throw new Error(String(r.status));
      const s = await r.json();
      if (s.version !== version) { version = s.version; render(s); }
      // The server had no poll slot free (other pages poll too): it answered at once and
      // says when to ask again.
      if (s.poll_again_ms) await new Promise((done) => setTimeout(done, s.poll_again_ms));
    } catch (e) {
      setStatus('ended', 'causeway ui is not running');
      return;
    }
  }
}

async function save() {
  const out = $('save-result');
  if (!state.save_to) {
    // No folder given on the command line: the browser saves the pack where it saves downloads.
    const a = el('a', { href: 'api/pack.cw', download: 'pack.cw' });
    document.body.append(a);
    a.click();
    a.remove();
    out.textContent = 'pack.cw downloaded: put it in a folder and pass it with --rules';
    return;
  }
  const r = await fetch('api/save', { method: 'POST' });
  const j = await r.json().catch(() => ({ message: String(r.status) }));
  out.textContent = j.message || '';
  out.dataset.ok = j.ok ? 'true' : 'false';
}

document.addEventListener('DOMContentLoaded', () => {
  $('save').addEventListener('click', save);
  $('timeline-fit').addEventListener('click', () => {
    if (!timeline) return;
    view = [timeline.start_ns, timeline.end_ns];
    drawTimeline();
  });
  $('timeline-question').addEventListener('click', () => {
    if (!timeline) return;
    view = questionView(timeline) || view;
    drawTimeline();
  });
  $('timeline-in').addEventListener('click', () => timeline && zoom((view[0] + view[1]) / 2, 0.5));
  $('timeline-out').addEventListener('click', () => timeline && zoom((view[0] + view[1]) / 2, 2));
  $('quit').addEventListener('click', async () => {
    await fetch('api/quit', { method: 'POST' }).catch(() => {});
    setStatus('ended', 'ended');
  });
  poll();
});
