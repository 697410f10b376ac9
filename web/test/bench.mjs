// Browser test of the Benchmark card: open the page in headless Chromium, check that bad input is
// refused with a visible message (and nothing runs), then run the benchmark and check that both
// tables show a finite positive number in every cell; saves a screenshot of the card.
// Usage: node web/test/bench.mjs [base URL, default http://127.0.0.1:8080/]
// BENCH_ROWS, BENCH_REPEATS (default 2 and 1) and BENCH_SIZE (quick or full, default quick) pick the
// workload; BENCH_JSON=path writes the page's result there (for BENCHMARKS.md's page-vs-native runs).
// CHROMIUM=/path/to/chrome picks the browser (web/test/browser.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { openBrowser, pageUrl } from './browser.mjs';
import { atPhoneWidth, checks, outDir as testOut } from './harness.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const url = pageUrl(base);
const outDir = testOut();
const shot = path.join(outDir, 'bench.png');
const ROWS = process.env.BENCH_ROWS || '2';
const REPEATS = process.env.BENCH_REPEATS || '1';
const SIZE = process.env.BENCH_SIZE || 'quick';
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS || 10 * 60 * 1000);

const { check, failures } = checks();

async function run() {
  const { ctx, close } = await openBrowser('bench', { width: 1000, height: 800 });
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning')
        console.log(`[page ${m.type()}] ${m.text()}`);
    });
    page.on('pageerror', (e) => {
      check(false, `no uncaught page error (${e.message})`);
    });
    console.log(`opening ${url}`);
    await page.goto(url);
    await page
      .waitForFunction(
        () => window.__bench && window.__bench.ready && window.__page && window.__page.ready,
        null,
        { timeout: 120000 },
      )
      .catch(() => {
        throw new Error('the page never set window.__bench.ready (did web/page/bench.js load?)');
      });
    const status = await page.evaluate(() => window.__page.status);
    if (!check(['idle', 'paused'].includes(status), `training page is idle (status ${status})`))
      return;
    await page.waitForFunction(() => !document.getElementById('btn-bench').disabled, null, {
      timeout: 5000,
    });
    check(true, 'Run benchmark button is on');

    // Bad input: a message, and nothing runs.
    for (const [rows, repeats, word] of [
      ['0', '1', 'rows'],
      ['2.5', '1', 'rows'],
      ['2', '', 'repeats'],
      ['2', '500', 'repeats'],
    ]) {
      await page.fill('#bench-rows', rows);
      await page.fill('#bench-repeats', repeats);
      await page.click('#btn-bench');
      const r = await page.evaluate(() => ({
        shown: !document.getElementById('bench-error').hidden,
        text: document.getElementById('bench-error').innerText,
        running: window.__bench.running,
        result: window.__bench.result,
        input: window.__bench.inputError,
      }));
      check(
        r.shown && r.text.includes(word) && !r.running && r.result === null,
        `rows "${rows}", repeats "${repeats}" refused with a visible message (${JSON.stringify(r.text.trim())})`,
      );
    }

    await page.fill('#bench-rows', ROWS);
    await page.fill('#bench-repeats', REPEATS);
    await page.selectOption('#bench-size', SIZE);
    const t0 = Date.now();
    await page.click('#btn-bench');
    // On the CPU backend a quick run can end before the click returns, so "started" is running or done.
    check(
      await page.evaluate(
        () =>
          (window.__bench.running || window.__bench.done) &&
          document.getElementById('bench-error').hidden,
      ),
      'valid input starts the run and clears the message',
    );
    await page.waitForFunction(() => window.__bench.done, null, {
      timeout: TIMEOUT_MS,
      polling: 250,
    });
    const secs = (Date.now() - t0) / 1000;
    const res = await page.evaluate(() => window.__bench);
    if (
      !check(
        !res.error && res.result,
        `benchmark finished without an error (${res.error || 'ok'}) in ${secs.toFixed(1)} s`,
      )
    ) {
      await page.locator('#bench-card').screenshot({ path: shot });
      return;
    }
    const r = res.result;
    console.log(`adapter: ${r.adapter}${res.adapter ? ` (browser: ${res.adapter})` : ''}`);
    for (const m of r.matmul)
      console.log(
        `  ${m.name.padEnd(30)} ${m.gflop.toFixed(3).padStart(8)} GFLOP ` +
          `${m.ms.toFixed(1).padStart(9)} ms ${m.gflops.toFixed(2).padStart(8)} GFLOP/s`,
      );
    for (const s of r.steps)
      console.log(
        `  ${s.variant.padEnd(12)} ${s.rows} x ${s.t}  ${s.ms_per_step.toFixed(1).padStart(9)} ` +
          `ms/step ${s.tokens_per_s.toFixed(0).padStart(7)} tokens/s ${s.dispatches_per_step} ` +
          `dispatches/step ${s.peak_mib.toFixed(2)} MiB peak`,
      );
    if (process.env.BENCH_JSON)
      fs.writeFileSync(
        process.env.BENCH_JSON,
        JSON.stringify({ ...r, browserAdapter: res.adapter }, null, 2),
      );

    check(
      r.matmul.length === 5 && r.steps.length === 2,
      `5 matmul cases and 2 variants (${r.matmul.length}, ${r.steps.length})`,
    );
    check(
      r.steps.every((s) => s.rows === Number(ROWS)) && r.repeats === Number(REPEATS),
      'result is for the rows and repeats asked',
    );
    // The rendered tables: every numeric cell finite and positive.
    const cells = await page.evaluate(() =>
      ['bench-matmul', 'bench-steps'].map((id) => {
        const t = document.getElementById(id);
        return {
          id,
          hidden: t.hidden,
          rows: [...t.querySelectorAll('tbody tr')].map((tr) =>
            [...tr.querySelectorAll('td.num')].map((td) => td.innerText),
          ),
        };
      }),
    );
    for (const t of cells) {
      check(!t.hidden && t.rows.length > 0, `table #${t.id} shown with ${t.rows.length} rows`);
      t.rows.forEach((row, i) => {
        // "2 × 127" counts as its first number; commas are thousands separators.
        // The CPU backend records no dispatches: that column shows "—" there and only there.
        const cpu = /^CPU backend/.test(r.adapter);
        const nums = row
          .filter((c) => !(cpu && t.id === 'bench-steps' && c.trim() === '—'))
          .map((c) => Number(c.replace(/,/g, '').split(' ')[0]));
        check(
          nums.length > 0 && nums.every((x) => Number.isFinite(x) && x > 0),
          `#${t.id} row ${i + 1}: ${row.join(' | ')}`,
        );
      });
    }
    const note = await page.evaluate(() => document.getElementById('bench-note').innerText);
    // The adapter as the browser names it (vendor / architecture) where it says, else the engine's name.
    const named = await page.evaluate(() => window.__bench.adapter);
    check(
      /wall clock/i.test(note) && note.includes(named ? `the WebGPU adapter ${named}` : r.adapter),
      `the note says wall clock and names the adapter: “${note.slice(0, 160)}”`,
    );
    await page.locator('#bench-card').screenshot({ path: shot });
    console.log(`screenshot: ${shot}`);
    // Phone width, with the tables filled: the card must not make the page wider than the screen.
    const phone = await atPhoneWidth(page);
    const w = {
      page: phone.width,
      wide: phone.wide,
      card: await page.evaluate(() =>
        Math.round(document.getElementById('bench-card').getBoundingClientRect().right),
      ),
    };
    await page.locator('#bench-card').screenshot({ path: path.join(outDir, 'bench-phone.png') });
    check(
      w.page <= 390 && w.card <= 391,
      `at 390 px the page is ${w.page} px wide, the card ends at ${w.card} ` +
        `px${w.wide.length ? `; widest: ${w.wide.join(', ')}` : ''}`,
    );
  } finally {
    await close();
  }
}

let code = 1;
try {
  await run();
  code = failures.length ? 1 : 0;
} catch (e) {
  console.error(`FAIL  ${e.message || e}`);
}
console.log(
  code === 0
    ? 'RESULT: ALL BENCHMARK CHECKS PASSED'
    : `RESULT: FAILED (${failures.length} failed check(s))`,
);
process.exit(code);
