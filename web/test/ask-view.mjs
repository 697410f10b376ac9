// Browser test of the Ask card as a first visit meets it (web/page/ask.js), at 1280 × 800 and 390 × 844:
// after Ask (the button, then an example name) the answer (its heading, prediction and map) is inside
// the window and has the focus, with the explanation of the maps below it; the model's line is one
// line ("Answering with: shipped model, 15.4% dev · change"); with reduced motion the page jumps there.
// Then, at 1280: "load the course model" in Ask loads it with one click; without course files Ask
// offers no built-in names for it, with a dev file given it offers that file's; with a pretraining
// text of the course model's vocabulary given, a name that text never mentions is marked a guess and
// one it mentions is not. Screenshots in web/test/out/[cpu/]ask-view-*.png. The backend is
// ATTNLAB_BACKEND's (webgpu by default, see browser.mjs).
// Usage: node web/test/ask-view.mjs [base URL, default http://127.0.0.1:8080/]
import path from 'node:path';
import { openBrowser, pageUrl } from './browser.mjs';
import { checks, outDir as testOut } from './harness.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const outDir = testOut();
const TIMEOUT = 240000;
const { check, failures } = checks();
// Process history a student has no use for: a commit hash, a script (the course's run.py and
// london_baseline.py are the assignment's own), a nice level, a repo path, a numbered work period.
const HISTORY = new RegExp(
  [
    '\\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\\d)[0-9a-f]{7,40}\\b',
    '\\b(?!run\\.py|london_baseline\\.py)[\\w-]+\\.(sh|py)\\b',
    '\\bnice\\b',
    '\\b(results|scripts|web|src)/',
    '\\bsessions? ?\\d',
    '\\bs\\d{2}\\b',
  ].join('|'),
  'i',
);

// Where the first answer is: its column's heading down to its large map, against the window.
const answerBox = (page) =>
  page.evaluate(() => {
    const col = document.querySelector('#ask-result .ask-col');
    if (!col) return null;
    const top = col.querySelector('h3').getBoundingClientRect().top;
    const map = col.querySelector('.big-map').getBoundingClientRect();
    const focus = document.activeElement === col.querySelector('h3');
    return { top: Math.round(top), bottom: Math.round(map.bottom), height: innerHeight, focus };
  });
const inside = (b) => b && b.top >= 0 && b.bottom <= b.height;

// Asks by `how` (a click) and waits for the answer, then up to 3 s for a smooth scroll to end.
async function askAndLook(page, how) {
  await page.evaluate(() => {
    window.__page.ask = null;
    window.__page.askError = null;
  });
  await how();
  await page.waitForFunction(() => window.__page.ask || window.__page.askError, null, {
    timeout: TIMEOUT,
  });
  await page
    .waitForFunction(
      () => document.activeElement && document.activeElement.matches('#ask-result .ask-col h3'),
      null,
      { timeout: 5000 },
    )
    .catch(() => {});
  let b = await answerBox(page);
  for (let i = 0; i < 30 && !inside(b); i++) {
    await page.waitForTimeout(100);
    b = await answerBox(page);
  }
  return b;
}

async function firstVisit(viewport) {
  const tag = `${viewport.width} px`;
  const { ctx, close } = await openBrowser(`ask-view-${viewport.width}`, viewport);
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(pageUrl(base));
    await page.waitForFunction(
      () => window.__page && window.__page.ready && window.__page.shipped.state === 'loaded',
      null,
      { timeout: TIMEOUT },
    );
    const facts = await page.evaluate(async () =>
      (await fetch('web/models/builtin-vanilla.json')).json(),
    );
    const pct = `${((100 * facts.dev_accuracy.correct) / facts.dev_accuracy.total).toFixed(1)}%`;
    const withLine = (await page.innerText('#ask-shipped .ask-with')).replace(/\s+/g, ' ').trim();
    check(
      withLine === `Answering with: shipped model, ${pct} dev · change`,
      `${tag}: the model's line is “${withLine}”`,
    );
    const lineBox = await page.evaluate(() => {
      const p = document.querySelector('#ask-shipped .ask-with');
      return p.getBoundingClientRect().height / parseFloat(getComputedStyle(p).lineHeight);
    });
    check(lineBox < 1.6, `${tag}: it takes one line (${lineBox.toFixed(2)} lines)`);
    check(
      (await page.getAttribute('#ask-shipped .ask-with a', 'href')) === '#models-card',
      `${tag}: “change” goes to the Models card`,
    );
    const b1 = await askAndLook(page, () => page.click('#btn-ask'));
    check(
      inside(b1),
      `${tag}: after Ask the answer is inside the window (${
        b1 && `${b1.top}–${b1.bottom} of ${b1.height}`
      })`,
    );
    check(b1 && b1.focus, `${tag}: the answer's heading has the focus`);
    const order = await page.evaluate(() => {
      const how = document.getElementById('ask-how-box');
      const res = document.getElementById('ask-result');
      const after = !!(res.compareDocumentPosition(how) & Node.DOCUMENT_POSITION_FOLLOWING);
      return { after, shown: !how.hidden, text: how.textContent };
    });
    check(
      order.after && order.shown && /causal mask/.test(order.text),
      `${tag}: how to read the maps comes below the answer`,
    );
    await page.screenshot({ path: path.join(outDir, `ask-view-${viewport.width}.png`) });
    // An example name, from the top of the page.
    await page.evaluate(() => window.scrollTo(0, 0));
    const b2 = await askAndLook(page, () =>
      page.click('#ask-examples button[data-ask]:nth-of-type(2)'),
    );
    check(
      inside(b2) && b2.focus,
      `${tag}: after an example name the answer is inside the window and focused (${
        b2 && `${b2.top}–${b2.bottom}`
      })`,
    );
    await page.screenshot({ path: path.join(outDir, `ask-view-${viewport.width}-example.png`) });
    // With reduced motion the page jumps: the answer is in view as soon as it is shown.
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.evaluate(() => {
      window.__page.ask = null;
    });
    await page.click('#btn-ask');
    await page.waitForFunction(
      () => window.__page.ask && document.activeElement.matches('#ask-result .ask-col h3'),
      null,
      { timeout: TIMEOUT },
    );
    const b3 = await answerBox(page);
    const at3 = b3 && `${b3.top}–${b3.bottom}`;
    check(inside(b3), `${tag}: with reduced motion the answer is in view at once (${at3})`);
    await page.emulateMedia({ reducedMotion: 'no-preference' });
    // The Data card says what the built-in corpus is, against the course's files (on a server with
    // --data, after "Use the built-in corpus"; its dev set is evaluated below).
    if (await page.isVisible('#use-served')) await page.click('#use-embedded');
    const summary = await page.textContent('#data-summary');
    check(
      /800 made-up people/.test(summary) &&
        /545 finetuning, 136 dev and 119 test questions/.test(summary) &&
        /2,000, 500 and 437/.test(summary) &&
        !/sizes\)/.test(summary),
      `${tag}: the Data card's built-in corpus: “${summary}”`,
    );
    // The Hyperparameters: folded on a phone (Pretrain right below the preset), open on a wide screen.
    const hyper = await page.evaluate(() => document.getElementById('hyper').open);
    check(
      hyper === viewport.width > 640,
      `${tag}: the Hyperparameters are ${hyper ? 'open' : 'folded'}`,
    );
    // The Evaluate table: the dev questions (30 at 1280 px); no word in it broken across lines.
    await page.fill('#eval-max', viewport.width < 500 ? '136' : '30');
    await page.evaluate(() => {
      window.__page.evalReport = null;
    });
    await page.click('#btn-eval');
    await page.waitForFunction(() => window.__page.evalReport || window.__page.evalError, null, {
      timeout: TIMEOUT,
    });
    const broken = await page.evaluate(() => {
      const out = [];
      for (const cell of document.querySelectorAll('#eval-table tr > *')) {
        if (!cell.offsetParent) continue;
        const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {
          for (const m of n.data.matchAll(/\S+/g)) {
            const r = document.createRange();
            r.setStart(n, m.index);
            r.setEnd(n, m.index + m[0].length);
            if (new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1)
              out.push(m[0]);
          }
        }
      }
      return out;
    });
    check(
      broken.length === 0,
      `${tag}: no word of the Evaluate table is broken across lines${
        broken.length ? ` (${broken.slice(0, 8).join(', ')})` : ''
      }`,
    );
    const fits = await page.evaluate(() => {
      const t = document.getElementById('eval-table');
      return t.getBoundingClientRect().right <= t.parentElement.getBoundingClientRect().right + 1;
    });
    check(fits, `${tag}: the Evaluate table fits its card`);
    // The Models card with every "How … was made" open: what, command, hardware kind, time and score;
    // no commit hash, script name, nice level, repo path or numbered work period.
    await page.waitForFunction(
      () =>
        window.__page.course &&
        window.__page.course.facts &&
        window.__page.synth &&
        window.__page.synth.facts,
      null,
      { timeout: TIMEOUT },
    );
    await page.evaluate(() => {
      for (const d of document.querySelectorAll('#models-card details')) d.open = true;
    });
    const models = await page.innerText('#models-card');
    const history = models.match(HISTORY);
    check(
      !history && /course model/i.test(models) && /EPYC-AVX2, 2 cores/.test(models),
      `${tag}: the Models card's facts carry no process history (found “${history && history[0]}”)`,
    );
    await page
      .locator('#models-card')
      .screenshot({ path: path.join(outDir, `ask-view-${viewport.width}-models.png`) });
    // The whole page, every fold open (each card's details, the demos'), with those facts read.
    const folds = await page.evaluate(
      () =>
        [...document.querySelectorAll('details')]
          .filter((d) => !d.open)
          .map((d) => {
            d.open = true;
            d.dataset.openedByTest = '1';
            return d;
          }).length,
    );
    const whole = await page.evaluate(() => document.body.innerText);
    const anywhere = whole.match(HISTORY);
    check(
      !anywhere,
      `${tag}: the page's whole text (${folds} more folds opened) carries no process history` +
        ` (found “${anywhere && anywhere[0]}”)`,
    );
    await page.evaluate(() => {
      for (const d of document.querySelectorAll('details[data-opened-by-test]')) {
        d.open = false;
        delete d.dataset.openedByTest;
      }
    });
    // The served files again, where the server has them (the course model's names come from them).
    if (await page.isVisible('#use-served')) await page.click('#use-served');
    check(
      errors.length === 0,
      `${tag}: no page errors${errors.length ? `: ${errors.join('; ')}` : ''}`,
    );
    return page;
  } finally {
    if (viewport.width < 1000) await close();
    else firstVisit.close = close;
  }
}

// A pretraining text of `n` distinct characters (the page's vocabulary adds its two own): plain
// sentences about Khatchig Mouradian, then as many other characters as it takes.
function wikiOf(n) {
  const base = 'Khatchig Mouradian. Khatchig Mouradian is a journalist born in Lebanon .\n';
  const have = new Set(base);
  let extra = '';
  for (let c = 0xa1; have.size + [...extra].length < n; c++) {
    const ch = String.fromCodePoint(c);
    if (!have.has(ch) && !extra.includes(ch)) extra += ch;
  }
  return `${base}Other text: ${extra} .\n`;
}

await firstVisit({ width: 390, height: 844 });
const page = await firstVisit({ width: 1280, height: 800 });
try {
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  // "load the course model" loads it with one click.
  await page.waitForFunction(
    () =>
      window.__page.course &&
      window.__page.course.facts &&
      !document.getElementById('ask-course-hint').hidden,
    null,
    { timeout: TIMEOUT },
  );
  const builtinFirst = await page.getAttribute('#ask-examples button[data-ask]', 'data-ask');
  await page.click('#ask-course-hint button[data-load="course"]');
  await page.waitForFunction(
    () => ['loaded', 'failed'].includes(window.__page.course.state),
    null,
    { timeout: TIMEOUT },
  );
  const c = await page.evaluate(() => ({
    state: window.__page.course.state,
    note: window.__page.course.note,
    vanilla: (window.__page.models.find((m) => m.slot === 'vanilla') || {}).label,
  }));
  check(
    c.state === 'loaded' && /course model/.test(c.vanilla || ''),
    `one click on “load the course model” loads it (${c.state}${c.note ? `: ${c.note}` : ''}; ` +
      `vanilla: ${c.vanilla})`,
  );
  await page
    .waitForFunction(
      () => /course model/.test(document.querySelector('#ask-shipped .ask-with').textContent),
      null,
      { timeout: 10000 },
    )
    .catch(() => {});
  const withCourse = (await page.innerText('#ask-shipped .ask-with')).replace(/\s+/g, ' ').trim();
  check(
    /^Answering with: course model, 25\.0% dev · change$/.test(withCourse),
    `the model's line names it: “${withCourse}”`,
  );
  const served = await page.evaluate(() => window.__page.dataSource);
  const chips = await page.$$eval('#ask-examples button[data-ask]', (b) =>
    b.map((x) => x.dataset.ask),
  );
  const examples = (await page.innerText('#ask-examples')).replace(/\s+/g, ' ');
  if (served === 'served') {
    check(
      chips.length > 0 && !chips.includes(builtinFirst) && !/built-in/.test(examples),
      `with the served files it offers their dev file's names: “${examples}”`,
    );
  } else {
    check(
      chips.length === 0 && !/built-in/.test(examples),
      `with the built-in corpus it offers no built-in names for the course model: “${examples}”`,
    );
  }
  // The course's files given: a dev file's names are offered; a pretraining text of the model's
  // vocabulary (256) is the one its answers are checked against.
  const dev = ['Khatchig Mouradian\tLebanon', 'Ada Quillfeather\tParis', 'Tomas Eberle\tVienna']
    .map((l) => `Where was ${l.replace('\t', ' born?\t')}\n`)
    .join('');
  await page.setInputFiles('#file-any', [
    { name: 'birth_dev.tsv', mimeType: 'text/plain', buffer: Buffer.from(dev) },
  ]);
  await page
    .waitForFunction(
      () => {
        const b = document.querySelector('#ask-examples button[data-ask]');
        return b && b.dataset.ask === 'Khatchig Mouradian';
      },
      null,
      { timeout: 30000 },
    )
    .catch(() => {});
  const given = (await page.innerText('#ask-examples')).replace(/\s+/g, ' ');
  check(
    /^Try people from birth_dev\.tsv: Khatchig Mouradian Ada Quillfeather Tomas Eberle/.test(given),
    `a dev file given, its names are offered: “${given}”`,
  );
  let wiki = wikiOf(254);
  // The table's pretraining row, read until it shows the file just given (a served wiki.txt has the same name).
  const wikiRow = () => page.$eval('#data-table tbody tr', (r) => r.textContent);
  for (let i = 0; i < 2; i++) {
    const before = await wikiRow();
    await page.setInputFiles('#file-wiki', {
      name: 'wiki.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from(wiki),
    });
    await page.waitForFunction(
      (b) => document.querySelector('#data-table tbody tr').textContent !== b,
      before,
      { timeout: 30000 },
    );
    const vocab = Number((await wikiRow()).match(/vocabulary (\d+)/)[1]);
    if (vocab === 256) break;
    wiki = wikiOf(254 + 256 - vocab);
  }
  const guess = async (name) => {
    await page.fill('#ask-text', name);
    await askAndLook(page, () => page.click('#btn-ask'));
    const a = await page.evaluate(() => ({
      p: window.__page.ask && window.__page.ask.vanilla && window.__page.ask.vanilla.prediction,
      e: window.__page.askError,
    }));
    const note = await page
      .locator('#ask-result .stranger')
      .first()
      .textContent({ timeout: 1000 })
      .catch(() => '');
    return { ...a, note };
  };
  const made = await guess('Ada Quillfeather');
  check(
    !made.e &&
      /never read about Ada Quillfeather/.test(made.note) &&
      /this is a guess/.test(made.note) &&
      /wiki\.txt/.test(made.note),
    `a name wiki.txt never mentions: the course model's “${made.p}” is marked a guess (“${made.note}”)`,
  );
  const known = await guess('Khatchig Mouradian');
  check(!known.e && known.note === '', `a name wiki.txt mentions: no guess note (“${known.note}”)`);
  await page.screenshot({ path: path.join(outDir, 'ask-view-course-guess.png') });
} finally {
  await firstVisit.close();
}
console.log(
  failures.length ? `RESULT: ${failures.length} FAILED` : 'RESULT: ALL ASK VIEW CHECKS PASSED',
);
process.exit(failures.length ? 1 : 0);
