// The page's engine on Dawn in Node, without a page: the same wasm build the page loads (web/pkg,
// scripts/build-web.sh), driven through web/engine-worker.js by the same exported functions the
// page's worker calls (web/test/dawn-engine.mjs hosts it), with Dawn (the npm package `webgpu`, the
// WebGPU implementation inside Chrome) as navigator.gpu. Prints one table:
//   the adapter and its features; the kernel self-checks (run_checks); the training step
//   (time_step: full 127-token rows; time_run: packed rows of the run's data), tiny and
//   the assignment's model, vanilla and synthesizer, with each step's dispatches, submits, new
//   buffers and uploads counted at the WebGPU API and the GPU's own time from timestamp queries
//   where the adapter has them; greedy evaluation of the built-in dev set by the shipped model
//   (load_model, eval_*), its predictions checked against the CLI's; with --data DIR
//   --epochs N a pretraining run through the page's run API (read_form, start,
//   train, finish).
//
//   node web/test/dawn.mjs [--quick] [--rows 8,128] [--repeats N] [--sizes tiny,assignment]
//                          [--eval N] [--data DIR --epochs N [--max-steps N] [--variant V]]
//                          [--no-timestamps]
//
// --quick (the test command's): the self-checks, two tiny steps of each variant on 2 rows, four dev
// questions. Where Dawn finds no adapter and no Vulkan driver is named (VK_ICD_FILENAMES,
// VK_DRIVER_FILES), it runs itself again with Chromium's SwiftShader driver
// (/usr/lib/chromium/vk_swiftshader_icd.json, or ATTNLAB_SWIFTSHADER_ICD): Debian 12's lavapipe is
// too old for Dawn. A software adapter's times are the CPU's, not a GPU's; the table says which.
// ATTNLAB_REQUIRE_HARDWARE_GPU=1 (scripts/gpu-check.sh on the GPU machine): a software adapter is an
// error. The pretraining run trains the assignment's model at its batch (with --sizes tiny alone the
// tiny model; with --quick a batch of --rows' first count).
// Exit status: 0 when every check passed, 1 when one failed, 2 for a bad flag or a missing part.

import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const web = path.resolve(here, '..');
const root = path.resolve(web, '..');
const SWIFTSHADER =
  process.env.ATTNLAB_SWIFTSHADER_ICD || '/usr/lib/chromium/vk_swiftshader_icd.json';

const USAGE = `usage: node web/test/dawn.mjs [--quick] [--rows LIST] [--repeats N] [--sizes tiny,assignment]
       [--eval N] [--data DIR --epochs N [--max-steps N] [--variant vanilla|synthesizer]] [--no-timestamps]`;

function die(msg, code = 2) {
  console.error(`dawn.mjs: ${msg}`);
  process.exit(code);
}

// ---- flags ----
const opt = {
  quick: false,
  rows: null,
  repeats: null,
  sizes: null,
  eval: null,
  data: null,
  epochs: null,
  maxSteps: null,
  variant: 'vanilla',
  timestamps: true,
};
{
  const a = process.argv.slice(2);
  const whole = (flag, v, min = 1) => {
    if (v === undefined || !/^[0-9]+$/.test(v) || +v < min) {
      die(`${flag} takes a whole number of at least ${min}, not '${v ?? ''}'\n${USAGE}`);
    }
    return +v;
  };
  for (let i = 0; i < a.length; i++) {
    const f = a[i];
    if (f === '--quick') opt.quick = true;
    else if (f === '--no-timestamps') opt.timestamps = false;
    else if (f === '--rows') {
      const v = a[++i] || '';
      if (!/^[0-9]+(,[0-9]+)*$/.test(v))
        die(`--rows takes row counts separated by commas (e.g. 8,128), not '${v}'`);
      opt.rows = v.split(',').map((n) => whole('--rows', n));
    } else if (f === '--repeats') opt.repeats = whole(f, a[++i]);
    else if (f === '--sizes') {
      const v = (a[++i] || '').split(',');
      if (!v.every((s) => s === 'tiny' || s === 'assignment'))
        die(`--sizes takes tiny and/or assignment, not '${v}'`);
      opt.sizes = v;
    } else if (f === '--eval') opt.eval = whole(f, a[++i], 0);
    else if (f === '--data')
      opt.data = a[++i] || die(`--data needs a folder with wiki.txt\n${USAGE}`);
    else if (f === '--epochs') opt.epochs = whole(f, a[++i]);
    else if (f === '--max-steps') opt.maxSteps = whole(f, a[++i]);
    else if (f === '--variant') {
      opt.variant = a[++i];
      if (!['vanilla', 'synthesizer'].includes(opt.variant)) {
        die(`--variant takes vanilla or synthesizer, not '${opt.variant}'`);
      }
    } else if (f === '-h' || f === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else die(`unknown flag '${f}'\n${USAGE}`);
  }
  if ((opt.data === null) !== (opt.epochs === null)) {
    die('--data DIR and --epochs N go together (a pretraining run on DIR/wiki.txt for N epochs)');
  }
  if (opt.maxSteps !== null && opt.data === null) {
    die('--max-steps caps the --data run; give --data DIR --epochs N too');
  }
  if (opt.data !== null && !fs.existsSync(path.join(opt.data, 'wiki.txt'))) {
    die(
      `--data ${opt.data}: no wiki.txt there (the course's pretraining text); give the folder that holds it`,
    );
  }
}
const rows = opt.rows || (opt.quick ? [2] : [8]);
const repeats = opt.repeats || (opt.quick ? 2 : 3);
const sizes = opt.sizes || (opt.quick ? ['tiny'] : ['tiny', 'assignment']);
const evalN = opt.eval ?? (opt.quick ? 4 : 136);

// ---- Dawn, and a driver for it ----
for (const f of ['pkg/attnlab.js', 'pkg/attnlab_bg.wasm']) {
  if (!fs.existsSync(path.join(web, f)))
    die(`web/${f} is missing: build the page's wasm first (scripts/build-web.sh)`);
}
let dawn;
try {
  dawn = await import('webgpu');
} catch (e) {
  die(
    `the npm package webgpu (Dawn for Node) did not load (${e.message.split('\n')[0]}): run \`cd web && npm ci\``,
  );
}
const gpu = dawn.create([]);
const adapter = await gpu.requestAdapter();
if (!adapter) {
  const named = process.env.VK_ICD_FILENAMES || process.env.VK_DRIVER_FILES;
  if (!named && !process.env.ATTNLAB_DAWN_AGAIN && fs.existsSync(SWIFTSHADER)) {
    // The Vulkan loader reads the driver list once, as Dawn loads: a new process with it set.
    console.error(
      'dawn.mjs: Dawn found no adapter among the Vulkan drivers here; running again on SwiftShader ' +
        `(${SWIFTSHADER})`,
    );
    const env = { ...process.env, VK_ICD_FILENAMES: SWIFTSHADER, ATTNLAB_DAWN_AGAIN: '1' };
    env.XDG_RUNTIME_DIR ||= '/tmp';
    const r = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env,
    });
    process.exit(r.status ?? 1);
  }
  die(
    `Dawn found no WebGPU adapter (VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES || 'unset'}, ` +
      `VK_DRIVER_FILES=${process.env.VK_DRIVER_FILES || 'unset'}): without a GPU install Chromium (its SwiftShader ` +
      `Vulkan driver, ${SWIFTSHADER}) or set VK_ICD_FILENAMES to a Vulkan driver's ICD file`,
  );
}

const { startEngine, marks, counters, perStep, timestampErrors } =
  await import('./dawn-engine.mjs');
const table = [];
const failures = [];
const row = (what, result) => {
  table.push([what, result]);
  console.error(`  ${what}: ${result}`);
};
const fail = (what, why) => {
  failures.push(`${what}: ${why}`);
  row(what, `FAILED: ${why}`);
};
const ms = (x) =>
  x === null || x === undefined ? '–' : x >= 100 ? `${x.toFixed(0)} ms` : `${x.toFixed(1)} ms`;
const mib = (b) => `${(b / 1048576).toFixed(1)} MiB`;
const t = () => performance.now();

const info = adapter.info || {};
const features = [...adapter.features].sort();
const software =
  info.isFallbackAdapter ||
  /swiftshader|llvmpipe|lavapipe/i.test(`${info.description} ${info.device}`);
const dawnVersion = JSON.parse(
  fs.readFileSync(path.join(web, 'node_modules/webgpu/package.json')),
).version;
row(
  'Node, Dawn',
  `${process.version}, webgpu ${dawnVersion}` +
    `; Vulkan driver ${process.env.VK_ICD_FILENAMES || process.env.VK_DRIVER_FILES || 'found by the loader'}`,
);
row(
  'adapter',
  [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(' / ') +
    (software ? " (a software adapter: its times are the CPU's, not a GPU's)" : ''),
);
row('features', features.join(', '));
if (software && process.env.ATTNLAB_REQUIRE_HARDWARE_GPU === '1') {
  die(
    "ATTNLAB_REQUIRE_HARDWARE_GPU is set and Dawn's adapter is a software one: name the GPU's Vulkan driver " +
      '(VK_DRIVER_FILES=/usr/share/vulkan/icd.d/nvidia_icd.json or where the driver put it)',
    1,
  );
}

const t0 = t();
let started;
try {
  started = await startEngine(gpu, dawn.globals, { timestamps: opt.timestamps });
} catch (e) {
  die(e.message);
}
const { engine } = started;
const dev = await engine.open_device('webgpu');
if (dev.kind !== 'gpu') fail('device', `the engine opened ${dev.describe}: ${dev.reason}`);
else {
  row(
    'device (open_device)',
    `${dev.describe}; subgroups ${globalThis.__attnlabSubgroups ? 'on' : 'off'}; ` +
      `module web/${started.build}, loaded in ${ms(t() - t0)}`,
  );
}
const timestamps = opt.timestamps && features.includes('timestamp-query');
const gpuTimeNote = timestamps
  ? ''
  : opt.timestamps
    ? 'GPU time: the adapter has no timestamp-query'
    : 'GPU time: off (--no-timestamps)';

// ---- the kernel self-checks ----
{
  const s = t();
  const checks = await engine.run_checks();
  const bad = checks.filter((c) => !c.passed);
  const line = `${checks.length - bad.length} of ${checks.length} passed in ${ms(t() - s)}`;
  const named = bad
    .slice(0, 5)
    .map((c) => `${c.op} ${c.case}`)
    .join('; ');
  if (bad.length) fail('kernel self-checks (run_checks)', `${line}; failed: ${named}`);
  else row('kernel self-checks (run_checks)', line);
}

// ---- training steps ----
const presets = await engine.presets();
const corpus = await engine.default_corpus();
const wiki = opt.data ? fs.readFileSync(path.join(opt.data, 'wiki.txt'), 'utf8') : corpus.wiki;
const wikiName = opt.data ? path.join(opt.data, 'wiki.txt') : 'the built-in wiki.txt';
const tsvPath = opt.data ? path.join(opt.data, 'birth_places_train.tsv') : null;
const tsv = tsvPath && fs.existsSync(tsvPath) ? fs.readFileSync(tsvPath, 'utf8') : corpus.train;
const VOCAB = { tiny: 65, assignment: 256 }; // bench --step's vocabularies

// What a step did at the WebGPU API, from the readbacks between `m0` and `m1` (the steps after the
// first), in one cell.
async function counted(m0, m1) {
  const p = await perStep(m0, m1);
  if (!p.spans) return { text: 'no steady step to count', p };
  const gpuMs = timestamps ? (p.gpuMs === null ? 'GPU –' : `GPU ${ms(p.gpuMs)}`) : '';
  const text = [
    gpuMs,
    `${p.dispatches} dispatches`,
    `${p.submits} submit${p.submits === 1 ? '' : 's'}`,
    `${p.passes} pass${p.passes === 1 ? '' : 'es'}`,
    `${p.buffers} new buffers (${p.bufferBytes} B)`,
    `${(p.written / 1024).toFixed(1)} KiB written`,
  ]
    .filter(Boolean)
    .join(', ');
  return { text, p };
}

for (const size of sizes) {
  const d = presets[size];
  for (const variant of ['vanilla', 'synthesizer']) {
    for (const r of rows) {
      const label = `step ${size} ${variant}, ${r} × 127`;
      // Full rows (the page's run-size measurement, time_step).
      try {
        const m0 = marks.length;
        const b0 = counters.bufferBytes;
        const s = await engine.time_step(
          variant,
          d.n_layer,
          d.n_head,
          d.n_embd,
          VOCAB[size],
          r,
          repeats,
        );
        const c = await counted(m0, marks.length - 1);
        row(
          `${label} full rows (time_step)`,
          `${ms(s.best_ms)} best, ${ms(s.ms_per_step)} mean of ${repeats}, ` +
            `first ${ms(s.first_ms)}; per step: ${c.text}; ${mib(counters.bufferBytes - b0)} of buffers in the call`,
        );
        if (c.p.buffers)
          fail(`${label} full rows`, `a step after the first created ${c.p.buffers} buffers`);
      } catch (e) {
        fail(`${label} full rows`, e.message);
      }
      // Packed rows of the run's data, cut into engine calls as the page's run cuts them.
      if (opt.quick) continue;
      try {
        const m0 = marks.length;
        const s = await engine.time_run(
          'pretrain',
          variant,
          d.n_layer,
          d.n_head,
          d.n_embd,
          wikiName,
          wiki,
          'birth_places_train.tsv',
          tsv,
          r,
          repeats,
        );
        // The steps' readbacks come first (one each), then the save's.
        const c = await counted(m0, m0 + repeats);
        row(
          `${label} packed pretraining rows (time_run)`,
          `${ms(s.best_ms)} best, ${ms(s.ms_per_step)} mean of ` +
            `${repeats}, first ${ms(s.first_ms)}, ${s.calls} engine call${s.calls === 1 ? '' : 's'} a step; ` +
            `per step: ${c.text}`,
        );
      } catch (e) {
        fail(`${label} packed`, e.message);
      }
    }
  }
}
if (gpuTimeNote) row('GPU time', gpuTimeNote);

// ---- greedy evaluation of the built-in dev set by the shipped model ----
if (evalN > 0) {
  const what = 'greedy evaluation, built-in dev set (shipped vanilla model)';
  try {
    const bytes = fs.readFileSync(path.join(web, 'models', 'builtin-vanilla.safetensors'));
    await engine.load_model(new Uint8Array(bytes), 'builtin-vanilla.safetensors');
    const s = t();
    let st = await engine.eval_begin('vanilla', 'birth_dev.tsv', corpus.dev, evalN);
    while (st.done < st.total) st = await engine.eval_next(8);
    const secs = (t() - s) / 1e3;
    const rep = await engine.eval_report();
    const cli = fs
      .readFileSync(path.join(root, 'results/builtin800/ft800_650.dev.predictions'), 'utf8')
      .split('\n');
    const differ = rep.rows.findIndex((x, i) => x.prediction !== cli[i]);
    const facts = JSON.parse(
      fs.readFileSync(path.join(web, 'models', 'builtin-vanilla.json'), 'utf8'),
    );
    const line =
      `${rep.line} (${rep.rows.length} questions; facts file: ${facts.dev_accuracy.correct} of ` +
      `${facts.dev_accuracy.total} on all) in ${secs.toFixed(1)} s, ` +
      `${((1e3 * secs) / rep.rows.length).toFixed(0)} ms a question`;
    if (differ >= 0) {
      fail(
        what,
        `${line}; line ${differ + 1} is “${rep.rows[differ].prediction}”, the CLI's “${cli[differ]}” ` +
          '(results/builtin800/ft800_650.dev.predictions)',
      );
    } else row(what, `${line}; every prediction is the CLI's`);
  } catch (e) {
    fail(what, e.message);
  }
}

// ---- a pretraining run through the page's run API ----
if (opt.data) {
  const cap = opt.maxSteps ? ` (at most ${opt.maxSteps} steps)` : '';
  const what =
    `pretraining ${opt.variant}, ${opt.epochs} epoch${opt.epochs === 1 ? '' : 's'}${cap} ` +
    `on ${wikiName} (start, train)`;
  try {
    // The assignment's model and batch; with --sizes tiny alone the tiny model, and with --quick a
    // batch of --rows' first count (a software adapter's try of the path, not a measurement).
    const p = presets;
    const dims = sizes.length === 1 && sizes[0] === 'tiny' ? p.tiny : p.assignment;
    const batch = opt.quick ? rows[0] : p.pretrain.batch;
    const form = {
      n_layer: String(dims.n_layer),
      n_head: String(dims.n_head),
      n_embd: String(dims.n_embd),
      dropout: String(p.dropout),
      seed: '0',
      epochs: String(opt.epochs),
      batch: String(batch),
      lr: String(p.pretrain.lr),
      max_steps: opt.maxSteps ? String(opt.maxSteps) : '',
      decay: '',
    };
    const spec = await engine.read_form('pretrain', opt.variant, false, form);
    const s = t();
    const started = await engine.start(
      spec,
      'wiki.txt',
      wiki,
      'birth_places_train.tsv',
      tsv,
      undefined,
    );
    let n = 1;
    let chunk = { steps: started.steps, reports: [], done: false };
    let last = null;
    const m0 = marks.length;
    while (!chunk.done) {
      const c0 = t();
      const before = chunk.steps;
      if (started.micro_rows) {
        // The page's steps in parts (web/page/steps.js) on one engine.
        const b = await engine.step_begin(1);
        if (!b) break;
        let done = b.parts[0][0];
        const end = b.parts[0][1];
        while (done < end) done = await engine.step_rows(Math.min(started.micro_rows, end - done));
        chunk = await engine.step_end();
      } else {
        // As web/page/train.js: chunks of about a second, the loss read every 2 steps.
        chunk = await engine.train(n, Math.min(n, 2));
      }
      const did = chunk.steps - before;
      if (did > 0) n = Math.max(1, Math.min(256, Math.round(1000 / ((t() - c0) / did))));
      if (chunk.reports.length) last = chunk.reports[chunk.reports.length - 1];
      if (last && (chunk.steps % 50 === 0 || chunk.done)) {
        console.error(
          `    step ${chunk.steps} of ${chunk.total_steps}, epoch ${last.epoch}, ` +
            `loss ${last.loss.toFixed(4)}`,
        );
      }
    }
    const secs = (t() - s) / 1e3;
    // Counted before finish, whose checkpoint is read back too.
    const c = timestamps ? await perStep(m0, marks.length - 1) : null;
    const bytes = await engine.finish('dawn.mjs');
    const each = ms((1e3 * secs) / Math.max(1, chunk.steps));
    row(
      what,
      `${chunk.steps} steps of ${started.total_steps} in ${secs.toFixed(1)} s (${each} a step, start ` +
        'included), ' +
        `final loss ${last ? last.loss.toFixed(4) : '–'}, ${last ? last.tokens_per_s.toFixed(0) : '–'} ` +
        `tokens/s; ${started.micro_rows ? `steps in parts of ${started.micro_rows} rows` : 'whole steps'}; ` +
        `checkpoint ${mib(bytes.length)}` +
        `${c && c.gpuMs !== null ? `; GPU ${ms(c.gpuMs)} between two loss reads (median)` : ''}`,
    );
  } catch (e) {
    fail(what, e.message);
  }
}
if (timestampErrors.length) fail('timestamps', timestampErrors[0]);

// ---- the table ----
console.log(`\n## The page's engine on Dawn (${new Date().toISOString().slice(0, 10)})\n`);
console.log('| part | result |');
console.log('|---|---|');
for (const [a, b] of table) console.log(`| ${a} | ${String(b).replaceAll('|', '/')} |`);
console.log(failures.length ? `\n${failures.length} check(s) FAILED` : '\nall checks passed');
process.exit(failures.length ? 1 : 0);
