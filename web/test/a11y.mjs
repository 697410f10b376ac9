// Accessibility: axe-core (web/node_modules/axe-core, run inside the page) on the whole page at
// 1280 px and at 390 px, after the shipped model has answered a question and every demo has drawn,
// and with the model table, the evaluation report and the demos' CPU columns shown (the section 2
// cards' tables on the CPU backend). Fails on any
// critical or serious violation (moderate and minor ones are printed). Also the keyboard: the Ask
// map's cells read with the arrow keys, its head thumbnails opened with Enter. The backend is
// ATTNLAB_BACKEND's (webgpu by default, see browser.mjs).
// Usage: node web/test/a11y.mjs [base URL, default http://127.0.0.1:8080/]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { openBrowser, pageUrl } from './browser.mjs';
import { checks } from './harness.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const require = createRequire(import.meta.url);
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const { check, failures } = checks();

// The violations of one axe run, as lines "impact rule: help (n nodes: selectors)".
async function audit(page) {
  await page.evaluate(axeSource);
  const res = await page.evaluate(async () => {
    // Colour contrast of text drawn over canvases and gradients cannot be computed; axe reports
    // those as "incomplete", not as violations.
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 6),
      count: v.nodes.length,
    }));
  });
  return res;
}

async function session(viewport) {
  const tag = `${viewport.width} px`;
  const { ctx, close } = await openBrowser(`a11y-${viewport.width}`, viewport);
  const page = ctx.pages()[0] || (await ctx.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(pageUrl(base));
    await page.waitForFunction(
      () => window.__page && window.__page.ready && window.__demos && window.__demos.ready,
      null,
      { timeout: 240000 },
    );
    // On a phone the Ask card begins on the first screen (the three ways in are one row of titles).
    if (viewport.width < 500) {
      const askTop = await page.evaluate(
        () => document.getElementById('ask-card').getBoundingClientRect().top,
      );
      check(
        askTop < viewport.height - 100,
        `${tag}: the Ask card begins on the first screen (at ${Math.round(askTop)} px of ${viewport.height})`,
      );
    }
    // The shipped model answers an example question (the attention map and its head thumbnails show);
    // at phone width a longer name, so that the map is wider than its column and scrolls.
    if (viewport.width < 500) {
      const name = await page.getAttribute('#ask-examples button[data-ask]', 'data-ask');
      await page.fill('#ask-text', `${name} ${name}`);
      await page.click('#btn-ask');
    } else {
      await page.click('#ask-examples button[data-ask]');
    }
    await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, {
      timeout: 120000,
    });
    // Keyboard: the Ask map reads cell by cell with the arrows; a head thumbnail opens with Enter.
    await page.focus('.big-map');
    const before = await page.$eval('.map-readout', (e) => e.textContent);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    const c1 = await page.evaluate(() => window.__page.askHover);
    await page.keyboard.press('ArrowLeft');
    const c2 = await page.evaluate(() => window.__page.askHover);
    const readout = await page.$eval('.map-readout', (e) => e.textContent);
    check(
      c1 &&
        c2 &&
        c2.j === c1.j - 1 &&
        c2.i === c1.i &&
        c1.j === c1.i &&
        readout !== before &&
        readout === c2.text &&
        /weight \d\.\d{3}/.test(readout),
      `${tag}: arrows move the Ask map's cell and the readout follows ` +
        `(${JSON.stringify(c1 && [c1.i, c1.j])} → ${JSON.stringify(c2 && [c2.i, c2.j])}: ` +
        `“${readout}”)`,
    );
    // Where the map scrolls sideways, it opens at the answer (its right end), and the keyboard's
    // cell stays in view: Home scrolls back to the first column, End to the last.
    const view = () =>
      page.evaluate(() => {
        const sc = document.querySelector('.map-scroll'),
          cv = sc.querySelector('.big-map'),
          h = window.__page.askHover;
        const T = window.__page.ask.vanilla.tokens.length,
          cell = (cv.clientWidth - 18) / T,
          x = 16 + h.j * cell;
        return {
          scrolls: sc.scrollWidth > sc.clientWidth + 1,
          left: sc.scrollLeft,
          max: sc.scrollWidth - sc.clientWidth,
          inView: x >= sc.scrollLeft - 1 && x + cell <= sc.scrollLeft + sc.clientWidth + 1,
          note: !document.querySelector('.map-wide').hidden,
        };
      });
    await page.keyboard.press('Home');
    const home = await view();
    await page.keyboard.press('End');
    const end = await view();
    if (viewport.width < 500) {
      check(
        home.scrolls && home.note && home.inView && home.left === 0 && end.inView && end.left > 0,
        `${tag}: the map wider than its column says so, and the keyboard's cell stays in view ` +
          `(Home: scrolled to ${home.left}, End: ${end.left} of ${end.max})`,
      );
    } else {
      check(
        home.inView && end.inView,
        `${tag}: the keyboard's cell is in view (the map ${home.scrolls ? 'scrolls' : 'fits'})`,
      );
    }
    // The heads are one Tab stop after the map: the arrows move between them, Enter shows one large,
    // and the next Tab leaves them.
    await page.focus('.big-map');
    await page.keyboard.press('Tab');
    const at = () =>
      page.evaluate(() => {
        const e = document.activeElement;
        return e.classList.contains('thumb') ? `${e.dataset.layer},${e.dataset.head}` : e.tagName;
      });
    const first = await at();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    const moved = await at();
    await page.keyboard.press('Enter');
    const picked = await page.$eval('.ask-col', (c) => [
      c.querySelector('.pick-layer').value,
      c.querySelector('.pick-head').value,
    ]);
    await page.keyboard.press('Tab');
    const after = await at();
    const n = await page.locator('.ask-col canvas.thumb').count();
    check(
      first === '0,0' && moved === '1,1' && picked.join() === '1,1' && !/,/.test(after),
      `${tag}: the ${n} head thumbnails are one Tab stop; arrows move (${first} → ${moved}), ` +
        `Enter shows it large (layer ${+picked[0] + 1}, head ${+picked[1] + 1}), Tab leaves ` +
        `(${after})`,
    );
    // Every demo's CPU column on (more tables), then a short evaluation (the report and its table).
    await page.$$eval('.demo-cpu input', (xs) =>
      xs.forEach((x) => {
        if (!x.checked) x.click();
      }),
    );
    await page.fill('#eval-max', '4');
    await page.click('#btn-eval');
    await page.waitForFunction(() => window.__page.evalReport || window.__page.evalError, null, {
      timeout: 240000,
    });
    await page.waitForTimeout(500);
    // What a screen reader hears: the answers and the evaluation's end in status regions (the
    // progress line is not one: it changes every half second); errors are alerts.
    const live = await page.evaluate(() => ({
      ask: [
        document.getElementById('ask-live').getAttribute('role'),
        document.getElementById('ask-live').textContent,
      ],
      ev: [
        document.getElementById('eval-live').getAttribute('role'),
        document.getElementById('eval-live').textContent,
      ],
      alerts: ['ask-error', 'train-error', 'eval-error', 'model-error', 'data-error'].every(
        (id) => document.getElementById(id).getAttribute('role') === 'alert',
      ),
      train: document.getElementById('train-status').getAttribute('role'),
    }));
    check(
      live.ask[0] === 'status' &&
        /^vanilla: \S/.test(live.ask[1]) &&
        live.ev[0] === 'status' &&
        /Correct: /.test(live.ev[1]) &&
        live.alerts &&
        live.train === 'status',
      `${tag}: answers, the evaluation's end and the training status are status regions, errors ` +
        `alerts (“${live.ask[1]}”, “${live.ev[1].slice(0, 60)}…”)`,
    );
    // The section 2 cards compute once scrolled into view: their scrolling tables are audited too
    // (axe found S2a's and S2c's unfocusable; they are named, focusable regions now). On the CPU
    // backend only: the tables are the same DOM on both backends, and on SwiftShader they took 40 s
    // of each width's 52 (the WebGPU run audits the cards as they are before they compute).
    if (process.env.ATTNLAB_BACKEND === 'cpu') {
      for (const id of ['s2a', 's2b', 's2c']) await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await page
        .waitForFunction(() => document.querySelectorAll('#demos .s2-scroll').length >= 3, null, {
          timeout: 240000,
        })
        .catch(() => {});
      check(
        (await page.evaluate(() => document.querySelectorAll('#demos .s2-scroll').length)) >= 3,
        `${tag}: the section 2 cards' tables are on the page for the audit`,
      );
    } else {
      console.log(
        `      (${tag}: the section 2 cards' tables are audited in the CPU backend's run)`,
      );
    }
    const found = await audit(page);
    const bad = found.filter((v) => v.impact === 'critical' || v.impact === 'serious');
    for (const v of found)
      console.log(`      ${v.impact} ${v.id}: ${v.help} (${v.count}: ${v.nodes.join(', ')})`);
    check(
      bad.length === 0,
      `${tag}: no critical or serious axe violation ` +
        `(${bad.map((v) => `${v.id} ×${v.count}`).join(', ') || 'none'}; ` +
        `${found.length - bad.length} moderate or minor)`,
    );
    // The drop zone's keyboard way: Enter on "choose them all at once" opens one picker for several
    // files (the native button's click on the hidden multi-file input, seen by a spy: headless
    // Chromium's file-chooser event is unreliable under load), and files chosen there are placed by
    // their names.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-a11y-'));
    const dev = path.join(dir, 'birth_dev.tsv');
    fs.writeFileSync(dev, 'Where was Ada Quill born?\tLondon\nWhere was Bo Tran born?\tParis\n');
    await page.evaluate(() => {
      const input = document.querySelector('#file-any');
      window.__pickerOpened = 0;
      input.click = () => {
        window.__pickerOpened += 1;
      };
    });
    await page.focus('#pick-files');
    await page.keyboard.press('Enter');
    const opened = await page.evaluate(() => [
      window.__pickerOpened,
      document.activeElement.id,
      document.activeElement.tagName,
    ]);
    check(
      opened[0] === 1 && opened[1] === 'pick-files' && opened[2] === 'BUTTON',
      `${tag}: Enter on the drop zone's button (a focused native button) opens the multi-file ` +
        `picker (${opened.join(', ')})`,
    );
    await page.setInputFiles('#file-any', [dev]);
    // The engine checks the file between its other calls: at 1280 px the Train card is in view, so
    // the device's first measurement (tens of seconds on SwiftShader) can be running; the Data card
    // then says the file waits, and the file is placed when the measurement ends.
    const placed = () =>
      /birth_dev\.tsv/.test(document.querySelector('#data-table').textContent) &&
      /2 questions/.test(document.querySelector('#data-table').textContent);
    // The file is read and checked asynchronously even when the engine is idle, so give the card
    // a moment (the summary still names the old data meanwhile): either the file is placed, or the
    // summary says it waits for the busy engine.
    const state = () => {
      const t = document.querySelector('#data-table').textContent;
      if (/birth_dev\.tsv/.test(t) && /2 questions/.test(t)) return 'placed at once';
      const s = document.getElementById('data-summary').textContent;
      return /^Checking birth_dev\.tsv next: the engine is busy/.test(s) ? s : '';
    };
    await page.waitForFunction(state, null, { timeout: 10000 }).catch(() => {});
    const waiting = await page.evaluate(() => {
      const t = document.querySelector('#data-table').textContent;
      return /birth_dev\.tsv/.test(t) && /2 questions/.test(t)
        ? 'placed at once'
        : document.getElementById('data-summary').textContent;
    });
    check(
      waiting === 'placed at once' ||
        /^Checking birth_dev\.tsv next: the engine is busy/.test(waiting),
      `${tag}: while the engine is busy the Data card says the file waits (${waiting})`,
    );
    await page.waitForFunction(placed, null, { timeout: 180000 }).then(
      () =>
        check(
          true,
          `${tag}: a file chosen there is placed by its name (birth_dev.tsv, 2 questions)`,
        ),
      async () =>
        check(
          false,
          `${tag}: birth_dev.tsv chosen in the multi-file picker was not placed (data table: ` +
            `${await page.$eval('#data-table', (t) => t.textContent.replace(/\s+/g, ' '))})`,
        ),
    );
    fs.rmSync(dir, { recursive: true, force: true });
    check(errors.length === 0, `${tag}: no page errors (${errors.join('; ') || 'none'})`);
  } finally {
    await close();
  }
}

const t0 = Date.now();
await session({ width: 1280, height: 800 });
await session({ width: 390, height: 844 });
console.log(
  failures.length
    ? `RESULT: ${failures.length} ACCESSIBILITY CHECK(S) FAILED`
    : `RESULT: ALL ACCESSIBILITY CHECKS PASSED in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
process.exit(failures.length ? 1 : 0);
