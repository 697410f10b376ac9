// The middle preset end to end in the page, as a student runs it (results/middle-preset/, "In the
// page"): the built-in corpus, Middle, Pretrain to the end, Finetune (the preset's epochs from
// the model), then Evaluate the 136 dev questions. Prints the label the page gave, the wall times,
// the probe's recall on the chart and the score; screenshots and the predictions (one a line) in
// web/test/out/middle-run*. FORM sets fields after the preset is chosen (FORM=seed=1). A
// measurement, not part of the test suite (it runs for the preset's whole time). FT_FORM sets fields
// after pretraining (FT_FORM=from=model,ft_epochs=10: what the preset itself switches to, which
// settings of one's own keep as they are).
// PROFILE=DIR opens a profile an earlier run left (it prints its folder; a run that fails keeps it)
// with PRETRAINED=1: its stored pretrained model is restored by the page, so this run finetunes it.
// Usage: [ATTNLAB_BACKEND=cpu] [Q=workers=2] [FORM=field=value,...] [FT_FORM=...] [PROFILE=DIR PRETRAINED=1]
//   node web/test/middle-run.mjs BASE_URL
import { writeFileSync } from 'node:fs';
import { openBrowser, pageUrl } from './browser.mjs';

const base = process.argv[2];
const HOURS = 3 * 3600 * 1000;
const { ctx, close, profile } = await openBrowser(
  'middle-run',
  { width: 1280, height: 900 },
  { webgpu: process.env.ATTNLAB_BACKEND !== 'cpu', keep: process.env.PROFILE || '' },
);
const pretrained = process.env.PRETRAINED === '1';
console.log(`browser profile: ${profile}`);
const page = ctx.pages()[0] || (await ctx.newPage());
page.on('pageerror', (e) => console.log(`page error: ${e}`));
const say = (s) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
await page.goto(pageUrl(base, process.env.Q || ''));
await page.waitForFunction(() => window.__page && window.__page.ready, null, { timeout: 300000 });
await page.locator('#train-card').scrollIntoViewIfNeeded();
await page.waitForFunction(() => window.__page.presetLabels && window.__page.fit, null, {
  timeout: 300000,
});
await page.click('#use-embedded');
await page.selectOption('#h-from', pretrained ? 'model' : 'scratch');
await page.selectOption('#preset', 'middle');
await page.waitForTimeout(1500);
// Form fields from "field=value,..." (a select by its option's value).
async function setFields(spec) {
  for (const kv of (spec || '').split(',').filter(Boolean)) {
    const [k, v] = kv.split('=');
    if (await page.$eval(`#h-${k}`, (e) => e.tagName === 'SELECT'))
      await page.selectOption(`#h-${k}`, v);
    else {
      await page.fill(`#h-${k}`, v);
      await page.dispatchEvent(`#h-${k}`, 'change');
    }
  }
}
await setFields(process.env.FORM);
const info = await page.evaluate(() => ({
  label: window.__page.presetLabels.middle,
  backend: window.__page.backend,
  workers: window.__page.workers,
  ua: navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0],
}));
say(
  `label: ${info.label}; backend ${info.backend}, engines ${JSON.stringify(info.workers)}, ${info.ua}`,
);
say(`note: ${await page.textContent('#preset-note')}`);
const form = await page.evaluate(() =>
  Object.fromEntries(
    [...document.querySelectorAll('[id^=h-]')].map((e) => [e.id.slice(2), e.value]),
  ),
);
say(`form: ${JSON.stringify(form)}`);

// One run (pretrain or finetune) to its end: returns its wall seconds, steps and last status.
async function train(button) {
  const finished = await page.evaluate(() => window.__page.finished);
  const t0 = Date.now();
  await page.click(button);
  let last = 0;
  for (;;) {
    const s = await page.evaluate(() => ({
      done: window.__page.finished,
      st: window.__page.status,
      steps: window.__page.steps,
      total: window.__page.total,
      error: window.__page.error,
    }));
    if (s.error) throw new Error(`${button}: ${s.error}`);
    if (s.done > finished && s.st === 'idle')
      return { seconds: (Date.now() - t0) / 1000, steps: s.steps, total: s.total };
    if (Date.now() - last > 120000) {
      last = Date.now();
      say(
        `${button}: step ${s.steps} of ${s.total}, ${((Date.now() - t0) / 60000).toFixed(1)} min`,
      );
    }
    if (Date.now() - t0 > HOURS) throw new Error(`${button}: not done after 3 h`);
    await page.waitForTimeout(2000);
  }
}

if (pretrained)
  say(
    `models kept in the profile: ` +
      `${JSON.stringify(await page.evaluate(() => window.__page.models.map((m) => m.label)))}`,
  );
const pre = pretrained ? { steps: 0, seconds: 0 } : await train('#btn-pretrain');
const recall = await page.evaluate(() =>
  (window.__page.history || []).map((h) => ({ label: h.label, recall: h.recall })),
);
say(
  `pretraining: ${pre.steps} steps in ${(pre.seconds / 60).toFixed(1)} min; recall on the ` +
    `chart: ${JSON.stringify(recall)}`,
);
await page.locator('#train-card').screenshot({ path: 'web/test/out/middle-run-pretrained.png' });
await setFields(process.env.FT_FORM);
const ft = {
  from: await page.inputValue('#h-from'),
  epochs: await page.inputValue('#h-ft_epochs'),
};
const fin = await train('#btn-finetune');
say(`finetuning (${JSON.stringify(ft)}): ${fin.steps} steps in ${fin.seconds.toFixed(0)} s`);
await page.selectOption('#eval-variant', 'vanilla');
await page.selectOption('#eval-file', 'dev');
await page.fill('#eval-max', '');
await page.evaluate(() => {
  window.__page.evalReport = null;
  window.__page.evalError = null;
});
const te = Date.now();
await page.click('#btn-eval');
await page.waitForFunction(
  () =>
    window.__page.evalReport ||
    window.__page.evalError ||
    !document.getElementById('eval-confirm').hidden,
  null,
  { timeout: 600000 },
);
if (await page.isVisible('#eval-confirm'))
  await page.click('#eval-confirm button[data-eval]:not([data-eval="0"])');
await page.waitForFunction(() => window.__page.evalReport || window.__page.evalError, null, {
  timeout: 600000,
});
const r = await page.evaluate(() => ({
  rep: window.__page.evalReport,
  error: window.__page.evalError,
}));
if (r.error) throw new Error(`evaluate: ${r.error}`);
writeFileSync(
  'web/test/out/middle-run.dev.predictions',
  r.rep.rows.map((row) => `${row.prediction}\n`).join(''),
);
const counts = {};
for (const row of r.rep.rows) counts[row.prediction] = (counts[row.prediction] || 0) + 1;
const top = Object.entries(counts)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 5)
  .map(([k, v]) => `${k} ${v}`)
  .join(', ');
say(
  `evaluation: ${r.rep.line} in ${((Date.now() - te) / 1000).toFixed(1)} s; London ` +
    `${r.rep.london_line}; most answered: ${top}`,
);
await page.locator('#eval-card').screenshot({ path: 'web/test/out/middle-run-evaluated.png' });
say(`total: ${((pre.seconds + fin.seconds) / 60).toFixed(1)} min of training`);
await close();
