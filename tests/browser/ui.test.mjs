// `causeway ui` in a real browser (Debian's chromium driven by Playwright): the page of a
// running `causeway ui` (its address in UI_URL) is loaded, each question is answered by
// clicking its first option (what --auto chooses), and the root cause the page shows must
// be the one `causeway debug --json --auto` found (EXPECTED, a file). Then "Save answers
// as a pack" is clicked, the pack is also fetched as the download the page offers
// (DOWNLOAD, a file to write), screenshots go to SHOTS (a folder), and Quit ends the
// server. Run by ui.sh, which checks the rest (the saved pack replays with no question).
import { chromium } from 'playwright-core';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';

const url = process.env.UI_URL;
const expected = JSON.parse(readFileSync(process.env.EXPECTED, 'utf8'));
const shots = process.env.SHOTS;
const name = process.env.NAME || 'ui';
mkdirSync(shots, { recursive: true });

function fail(why) {
  console.log(`FAIL ${name}: ${why}`);
  process.exit(1);
}
function ok(what) { console.log(`ok ${name}: ${what}`); }

// Without the token, or with another one, nothing is served.
const u = new URL(url);
const token = u.pathname.split('/')[1];
const wrong = token.replace(/^./, c => (c === '0' ? '1' : '0'));
for (const [what, path] of [['no token', '/'], ['no token, a page', '/index.html'],
                            ['a wrong token', `/${wrong}/`], ['a wrong token, the API', `/${wrong}/api/state`],
                            ['a token prefix', `/${token.slice(0, -1)}/`]]) {
  const r = await fetch(`${u.origin}${path}`);
  if (r.status !== 403) fail(`${what} (${path}) got ${r.status}, not 403`);
}
ok('no token, a wrong token and a token prefix get 403');

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  // Root cannot run Chromium's sandbox; the page is our own.
  args: ['--no-sandbox', '--disable-gpu'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const errors = [];
page.on('pageerror', e => errors.push(String(e)));
page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
await page.goto(url);

// Answer each question with its first option, as --auto would; the page must show each
// option's evidence (when the option has some) beside it.
let asked = 0;
let shotQuestion = false;
for (;;) {
  const phase = await page.waitForFunction(() => {
    const p = document.getElementById('status').dataset.phase;
    return p === 'question' || p === 'done' || p === 'no_hang' || p === 'error' ? p : false;
  }, null, { timeout: 60000 }).then(h => h.jsonValue());
  if (phase !== 'question') {
    if (phase !== 'done') fail(`the diagnosis ended in phase ${phase}: ${await page.textContent('#message')}`);
    break;
  }
  const number = await page.textContent('#question-number');
  if (Number(number) !== asked + 1) fail(`question ${number} shown, expected ${asked + 1}`);
  const options = page.locator('#options button.option');
  if (await options.count() < 1) fail('a question without options');
  const text = await page.textContent('#question-text');
  if (!text.trim()) fail('a question without text');
  // The timeline shows what was found so far, the segment asked about outlined and, for
  // an edge question, the options' segments or arrows numbered.
  await page.waitForSelector('#timeline svg .slice.subject', { timeout: 10000 })
    .catch(() => fail(`question ${number}: the segment asked about is not marked on the timeline`));
  const kind = await page.textContent('#question-kind');
  if (kind === 'edge') {
    const marked = await page.locator('#timeline .option-label').count();
    if (marked < 1) fail(`question ${number}: no option numbered on the timeline`);
  }
  if (!shotQuestion) {
    await page.screenshot({ path: `${shots}/${name}-question.png`, fullPage: true });
    shotQuestion = true;
  }
  asked += 1;
  await options.first().click();
  await page.waitForFunction(n => {
    const s = document.getElementById('status').dataset.phase;
    return s !== 'question' || document.getElementById('question-number').textContent !== n;
  }, number, { timeout: 60000 });
}
const autoQuestions = expected.queries.filter(q => q.source === 'auto').length;
if (asked !== autoQuestions) fail(`the page asked ${asked} questions, debug --auto chose ${autoQuestions}`);
ok(`${asked} question(s) answered by clicking the first option`);

// The root cause shown is debug's, in its thread, kind and description.
const shown = await page.$$eval('#root-cause .cause', els => els.map(e => ({
  tid: Number(e.dataset.tid), pid: Number(e.dataset.pid), kind: e.dataset.kind,
  what: e.querySelector('.what').textContent,
})));
const want = expected.root_causes.map(rc => ({ tid: rc.tid, pid: rc.pid, kind: rc.kind, what: rc.what }));
if (JSON.stringify(shown) !== JSON.stringify(want))
  fail(`root causes shown ${JSON.stringify(shown)}, debug --json says ${JSON.stringify(want)}`);
ok(`root cause shown is debug's: ${want.map(w => `${w.tid} ${w.kind}`).join(', ')}`);
// The report the page shows is debug's JSON but for who answered (the page's clicks are "user").
const report = JSON.parse(await page.textContent('#report-json'));
const strip = j => JSON.stringify({ ...j, queries: (j.queries || []).map(q => ({ ...q, source: null })) });
if (strip(report) !== strip(expected)) fail('the report\'s JSON differs from causeway debug --json');
ok('the report is debug --json\'s');

// The timeline: a track per thread on the path, the root cause's and the hang's bars marked.
await page.waitForSelector('#timeline svg .slice', { timeout: 10000 }).catch(() => fail('no timeline drawn'));
const tracks = await page.$$eval('#timeline .track-label', els => els.map(e => Number(e.dataset.tid)));
for (const step of expected.path)
  if (!tracks.includes(step.tid)) fail(`thread ${step.tid} of the causal path has no track (${tracks})`);
if (await page.locator('#timeline .slice.root-cause').count() < 1) fail('no root-cause bar in the timeline');
if (await page.locator('#timeline .slice.hang').count() < 1) fail('no hang bar in the timeline');
if (await page.locator('#timeline .flow.on-path').count() < expected.path.length - 1)
  fail('fewer path arrows than path edges');
ok(`timeline: ${tracks.length} tracks, root cause and hang marked, path arrows drawn`);
await page.locator('#timeline-section').screenshot({ path: `${shots}/${name}-timeline.png` });

// Save answers as a pack (into --save-answers), and the same pack as a download.
await page.click('#save');
await page.waitForFunction(() => document.getElementById('save-result').textContent !== '', null, { timeout: 10000 });
const saved = await page.textContent('#save-result');
if (!/^saved /.test(saved)) fail(`save answers said: ${saved}`);
ok(`save: ${saved}`);
const pack = await page.request.get(`${url}api/pack.cw`);
if (!pack.ok()) fail(`the pack's download got ${pack.status()}`);
writeFileSync(process.env.DOWNLOAD, await pack.body());
await page.evaluate(() => window.scrollTo(0, 0));
await page.screenshot({ path: `${shots}/${name}-result.png` });

// The latency heat map, when the page says there is one, is drawn in its frame.
const latencyNote = await page.textContent('#latency-note');
if (await page.locator('#latency-frame iframe').count() > 0) {
  const rows = page.frameLocator('#latency-frame iframe').locator('tr.context');
  await rows.first().waitFor({ timeout: 10000 }).catch(() => fail('the heat map drew no context'));
  await page.locator('#latency-section').scrollIntoViewIfNeeded();
  await page.locator('#latency-section').screenshot({ path: `${shots}/${name}-latency.png` });
  ok(`latency heat map: ${await rows.count()} contexts drawn`);
} else {
  if (!/^no latency data/.test(latencyNote)) fail(`no heat map, and the page does not say why: ${latencyNote}`);
  ok(`latency heat map: ${latencyNote}`);
}

// Names are text: nothing from the trace became an element, and a name with markup
// (MARKUP, when the trace holds one) is shown as it is.
if (await page.locator('main b, main script, main img').count() > 0) fail('trace text became markup');
if (process.env.MARKUP) {
  const inQuestionlessParts = await page.evaluate(m => document.querySelector('main').innerText.includes(m), process.env.MARKUP);
  const inTimeline = await page.$$eval('#timeline .track-label', (els, m) => els.some(e => e.textContent.includes(m)), process.env.MARKUP);
  if (!inQuestionlessParts || !inTimeline) fail(`the name ${process.env.MARKUP} is not shown as text (page: ${inQuestionlessParts}, timeline: ${inTimeline})`);
  if (await page.title() !== 'causeway ui') fail(`a script from the trace ran (title ${await page.title()})`);
  ok(`the name ${process.env.MARKUP} stayed text`);
}
if (errors.length) fail(`the page reported errors: ${errors.join('; ')}`);

await page.click('#quit');
await page.waitForFunction(() => document.getElementById('status').dataset.phase === 'ended', null, { timeout: 10000 });
await browser.close();
ok('quit');
