// What the page's tests share: where their pictures go, named steps (PASS or FAIL with the
// seconds each took, a full-page picture of a failure, the closing count), plain checks that
// count their failures, waiting on the page's state, what is too wide at 390 px, and the list of
// the page's own modules.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

// web/test/out, or web/test/out/<backend> when ATTNLAB_BACKEND names another backend than WebGPU
// (the same test's pictures on both backends side by side); made if missing.
export function outDir() {
  const backend = process.env.ATTNLAB_BACKEND || 'webgpu';
  const dir = path.join(here, 'out', ...(backend === 'webgpu' ? [] : [backend]));
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// What the page's engine did last (web/backend.js, recentJobs), for a failed step: a call that ran
// for long holds the page's frames on a software adapter, and so Playwright's waits.
async function engineCalls(p) {
  const got = p.evaluate(() =>
    import('./web/backend.js').then((m) => ({
      jobs: m.recentJobs(),
      now: Math.round(performance.now()),
    })),
  );
  const none = new Promise((r) => setTimeout(() => r('no answer in 5 s'), 5000));
  const r = await Promise.race([got.catch((e) => `not read: ${e.message || e}`), none]);
  if (typeof r === 'string') return `the engine's last calls: ${r}`;
  const text = r.jobs
    .slice(-12)
    .map(
      (j) =>
        `${j.what} ${(j.ms / 1000).toFixed(1)} s${j.running ? ' (running)' : ''}` +
        ` at ${((j.at - r.now) / 1000).toFixed(1)} s`,
    );
  return `the engine's last calls (start relative to now): ${text.join('; ') || 'none'}`;
}

// A card's picture, taken without Playwright's wait for two equal animation frames (a software
// adapter busy with the engine's compute can hold frames back for longer than its 30 s; seen in
// CI). The card is scrolled into view and its place and size sampled by timer over windows of
// 0.3 s, up to twenty, until one sees it still; then the page's region it covers is taken, with a
// frame waited for up to two minutes. Resolves to {still, moves}: whether the last window saw it
// still, and what it did (its boxes, the frames seen, the page's busy regions).
export async function cardShot(page, selector, file) {
  const seen = await page.evaluate(async (sel) => {
    const el = document.querySelector(sel);
    const r0 = el.getBoundingClientRect();
    if (r0.top < 0 || r0.bottom > innerHeight)
      el.scrollIntoView({ block: r0.height > innerHeight ? 'start' : 'center' });
    let frames = 0,
      sampling = true;
    const count = () => {
      frames++;
      if (sampling) requestAnimationFrame(count);
    };
    requestAnimationFrame(count);
    let boxes = [];
    for (let w = 0; w < 20 && boxes.length !== 1; w++) {
      const seenNow = new Set();
      for (let k = 0; k < 6; k++) {
        const r = el.getBoundingClientRect();
        seenNow.add([r.x, r.y, r.width, r.height].map(Math.round).join(','));
        await new Promise((res) => setTimeout(res, 60));
      }
      boxes = [...seenNow];
    }
    sampling = false;
    const r = el.getBoundingClientRect();
    const clip = {
      x: r.x + window.scrollX,
      y: r.y + window.scrollY,
      width: r.width,
      height: r.height,
    };
    return {
      boxes,
      frames,
      clip,
      busy: [...document.querySelectorAll('[aria-busy="true"]')].map((e) => e.id),
    };
  }, selector);
  await page.screenshot({ path: file, fullPage: true, clip: seen.clip, timeout: 120000 });
  return {
    still: seen.boxes.length === 1,
    moves: `${seen.boxes.join(' → ')}; ${seen.frames} frames; busy: ${seen.busy.join(', ') || 'none'}`,
  };
}

// cardShot, failing the step where the card did not stay still.
export async function stillShot(page, selector, file) {
  const seen = await cardShot(page, selector, file);
  assert(seen.still, `${selector} did not stay still for 0.3 s in twenty tries (${seen.moves})`);
}

// Named steps. `step(name, f)` runs f and prints `PASS  name (seconds): detail` with what f
// returns, or `FAIL  name (seconds): message`, keeping a picture of `page()` (when it has one) as
// `<label>-fail-<step number>.png` in `dir`. A failed step ends the test (its error is thrown on)
// unless `keepGoing`. `summary(t0)` prints how many steps passed since t0 and `RESULT: ALL <what>
// PASSED` or `RESULT: FAILED`, and returns the exit code.
export function steps({ label, dir, page, what, keepGoing = false }) {
  const results = [];
  async function step(name, f) {
    const t0 = Date.now();
    const took = () => ((Date.now() - t0) / 1000).toFixed(1);
    try {
      const detail = await f();
      results.push({ name, ok: true });
      console.log(`PASS  ${name} (${took()} s)${detail ? `: ${detail}` : ''}`);
    } catch (e) {
      results.push({ name, ok: false });
      console.log(`FAIL  ${name} (${took()} s): ${e.message || e}`);
      const p = page();
      if (p) console.log(`      ${await engineCalls(p)}`);
      if (p)
        await p
          .screenshot({
            path: path.join(dir, `${label}-fail-${results.length}.png`),
            fullPage: true,
          })
          .catch(() => {});
      if (!keepGoing) throw e;
    }
  }
  const failed = () => results.filter((r) => !r.ok).length;
  // An error outside any step (the browser did not start, a step's error thrown on) is said once.
  const outside = (e) => {
    if (!failed()) console.log(`FAIL  ${e.message || e}`);
  };
  function summary(t0, { ended = true, note = '' } = {}) {
    const passed = results.length - failed();
    console.log(
      `${passed} of ${results.length} steps passed in ${((Date.now() - t0) / 1000).toFixed(0)} s${note}`,
    );
    const ok = ended && failed() === 0;
    console.log(ok ? `RESULT: ALL ${what} PASSED` : 'RESULT: FAILED');
    return ok ? 0 : 1;
  }
  // Runs `run` (0 when it reached its end), prints the summary (and then `after()`, when given)
  // and exits with the summary's code.
  async function main(run, { note = '', after = () => {} } = {}) {
    const t0 = Date.now();
    let code = 1;
    try {
      code = await run();
    } catch (e) {
      outside(e);
    }
    const exit = summary(t0, { ended: code === 0, note });
    after();
    process.exit(exit);
  }
  return { step, outside, summary, main };
}

// Plain checks: `check(ok, what)` prints PASS or FAIL, the line and the seconds since the last
// check (or since checks() was called: where a test spends its time), counts a failure in
// `failures` and returns ok.
export function checks() {
  const failures = [];
  let last = Date.now();
  const check = (ok, what) => {
    const since = ((Date.now() - last) / 1000).toFixed(1);
    last = Date.now();
    console.log(`${ok ? 'PASS' : 'FAIL'}  ${what} (+${since} s)`);
    if (!ok) failures.push(what);
    return ok;
  };
  return { check, failures };
}

// The page's state (window.__page) as plain data: the loss list copied, the large or
// non-serialisable parts left out. Null before the page has set it up.
export function pageState(page) {
  return page.evaluate(() => {
    const s = window.__page;
    return (
      s && {
        ...s,
        losses: s.losses ? s.losses.slice() : [],
        ask: undefined,
        evalReport: undefined,
        destroyDevice: undefined,
      }
    );
  });
}

// The vanilla model's Ask answer: the question, the prediction, the characters, the maps' layers
// and heads, and `worst`, the largest |row sum − 1| over every map (each row a probability
// distribution over the causal prefix); `{ error }` when there is no answer.
export function askAnswer(page) {
  return page.evaluate(() => {
    const v = window.__page.ask && window.__page.ask.vanilla;
    if (!v) return { error: window.__page.askError };
    const T = v.tokens.length;
    let worst = 0;
    for (const m of v.maps)
      for (let h = 0; h < v.n_head; h++)
        for (let i = 0; i < T; i++) {
          let sum = 0;
          for (let j = 0; j < T; j++) sum += m[h * T * T + i * T + j];
          worst = Math.max(worst, Math.abs(sum - 1));
        }
    return {
      question: v.question,
      prediction: v.prediction,
      T,
      layers: v.maps.length,
      heads: v.n_head,
      worst,
      tokens: v.tokens.join(''),
    };
  });
}

// The page at a phone's width (390 × 844; the viewport is left there): its width, and up to five
// of the elements `within` selects that reach past 391 px outside the regions `scrolls` selects
// (which scroll, and may hold wider things), each as tag#id.class.
export async function atPhoneWidth(
  page,
  { within = 'main *, body > *', scrolls = '.map-scroll, .table-scroll, .wide-scroll, .demo' } = {},
) {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  return page.evaluate(
    ([within, scrolls]) => ({
      width: document.documentElement.scrollWidth,
      wide: [...document.querySelectorAll(within)]
        .filter((e) => e.getBoundingClientRect().right > 391 && !e.closest(scrolls))
        .slice(0, 5)
        .map(
          (e) =>
            e.tagName.toLowerCase() +
            (e.id ? `#${e.id}` : '') +
            (e.className ? `.${String(e.className).split(' ')[0]}` : ''),
        ),
    }),
    [within, scrolls],
  );
}

// The page's own modules (web/**/*.js, not the wasm build's glue, the npm packages or the tests).
export function pageModules(dir = path.join(here, '..')) {
  const skip = new Set(['node_modules', 'pkg', 'pkg-relaxed', 'test', 'vendor']);
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return skip.has(e.name) ? [] : pageModules(p);
    return e.name.endsWith('.js') ? [p] : [];
  });
}

// Reads `read()` every `every` ms until `pred` holds of its value, and returns that value. Throws
// when `fatal(state, what)` returns a message (an error the page reports), or after `timeout` ms,
// naming what was awaited and the state's status, step and error.
export async function waitFor(read, pred, what, { timeout, every = 200, fatal = () => null }) {
  const t0 = Date.now();
  for (;;) {
    const s = await read();
    if (s && pred(s)) return s;
    const bad = s && fatal(s, what);
    if (bad) throw new Error(`while waiting for ${what}: page error: ${bad}`);
    if (Date.now() - t0 > timeout) {
      throw new Error(
        `timed out waiting for ${what}; page state: ` +
          JSON.stringify({ status: s && s.status, steps: s && s.steps, error: s && s.error }),
      );
    }
    await sleep(every);
  }
}

// The `fatal` of a page that must not report an error, a lost device aside (the tests that lose
// one on purpose wait for the page to say so).
export const pageError = (s) => (s.error && !/device lost/.test(s.error) ? s.error : null);
