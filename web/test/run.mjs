// The page's browser tests, as scripts/test.sh runs them: each web/test/NAME.mjs in a process of its
// own, all sharing one Chromium (web/test/browser.mjs launchShared; a test that starts without
// WebGPU launches its own), each given a fresh context of it. Tests are in two lanes: the WebGPU
// tests (SwiftShader, in the browser's one GPU process; in order, as the first of them that measures
// the device leaves its measurement for the later ones) and the CPU backend's (wasm in the pages'
// own processes). With --jobs 1 (the default) one test at a time, in the order listed; with --jobs 2
// the lanes side by side. On 2 cores side by side paid nothing (SwiftShader and the CPU backend are
// both CPU-bound; TESTING.md) and could leave an evaluation's helper engine no time to join before
// the evaluation ended (eval-workers.mjs). Prints each test's output (with --jobs 2 when it ends)
// and its seconds; on the first failure it stops the others and exits 1, naming the failed test and
// repeating the end of its output.
//
//   node web/test/run.mjs URL [--jobs 1|2] [--only NAME,NAME]
//
// URL: the page, served with the fixture's data (scripts/serve.py --data FIXTURE/data).
// ATTNLAB_FIXTURE: the fixture's folder (web/test/fixture.sh), given to the tests that use it.
// --only: the tests whose labels (as printed, e.g. `checks`, `cpu/checks`) or file names are given.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchShared } from './browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const USAGE = 'usage: node web/test/run.mjs URL [--jobs 1|2] [--only NAME,NAME]';

// Each test: its file, its settings, what it checks (printed), and: `fixture`, whether it needs
// ATTNLAB_FIXTURE; `lane`, WebGPU unless ATTNLAB_BACKEND=cpu or `cpu` given; `own`, a browser of its
// own (a test that reads a download's file: Playwright keeps no file for a connected browser).
const cpu = { ATTNLAB_BACKEND: 'cpu' };
const TESTS = [
  ['checks', {}, 'kernel checks, WebGPU'],
  ['checks', cpu, "kernel checks, the CPU backend's relaxed SIMD build"],
  [
    'checks',
    { ...cpu, ATTNLAB_QUERY: 'simd=128' },
    "kernel checks, the CPU backend's SIMD128 build",
  ],
  ['demos', {}, 'the attention demos, WebGPU'],
  ['demos', cpu, 'the attention demos, CPU backend'],
  ['section2', {}, 'section 2 demos, WebGPU', { fixture: true }],
  ['section2', cpu, 'section 2 demos, CPU backend', { fixture: true }],
  // The first WebGPU test to measure the device (student.mjs tests the measurement) leaves it for
  // the later ones (ATTNLAB_MEASURED); section2 checks the Train card before it is measured.
  ['student', {}, 'the page as a student meets it: presets, evaluations, two models; WebGPU'],
  ['page', {}, 'the training page, WebGPU', { fixture: true, own: true }],
  ['engine', {}, 'the engine door, WebGPU'],
  ['bench', {}, 'the benchmark card, WebGPU'],
  ['matmul', {}, "the Device card's matmul kernel, WebGPU"],
  ['matmul', cpu, "the Device card's matmul kernel, CPU backend"],
  ['course', {}, 'the course model, loaded and asked, WebGPU'],
  ['course', cpu, 'the course model, loaded and asked, CPU backend'],
  ['synth', {}, 'the shipped synthesizer, loaded from E9, asked and evaluated, WebGPU'],
  ['synth', cpu, 'the shipped synthesizer, loaded from E9, asked and evaluated, CPU backend'],
  // Without WebGPU first (its own browser); then "auto" with SwiftShader, which keeps to the CPU.
  ['nogpu', {}, 'without WebGPU, CPU backend', { lane: 'cpu' }],
  ['ask-view', cpu, 'Ask where the eye is, first visit at 1280 and 390 px, CPU backend'],
  ['page', cpu, 'the training page again, CPU backend', { fixture: true, own: true }],
  ['student', cpu, 'the page as a student meets it, CPU backend'],
  [
    'workers',
    {},
    'steps in parts and two engines, CPU backend, isolated or not',
    { fixture: true, lane: 'cpu' },
  ],
  [
    'eval-workers',
    {},
    'an evaluation split across two engines, isolated or not, and a helper that does not start',
    { fixture: true, lane: 'cpu' },
  ],
  ['vit', {}, 'the ViT card, WebGPU', { own: true }],
  ['vit', cpu, 'the ViT card, CPU backend', { own: true }],
  ['a11y', {}, 'accessibility, axe-core at 1280 and 390 px, WebGPU'],
  ['a11y', cpu, 'accessibility, axe-core at 1280 and 390 px, CPU backend'],
].map(([file, env, what, { fixture = false, lane, own = false } = {}]) => {
  const tag = env.ATTNLAB_QUERY
    ? `${env.ATTNLAB_BACKEND}-${env.ATTNLAB_QUERY}`
    : env.ATTNLAB_BACKEND;
  return {
    file,
    env,
    what,
    fixture,
    own,
    label: tag ? `${tag}/${file}` : file,
    lane: lane || (env.ATTNLAB_BACKEND === 'cpu' ? 'cpu' : 'webgpu'),
  };
});

function usage(msg) {
  console.error(`run.mjs: ${msg}\n${USAGE}`);
  process.exit(2);
}

let url = '';
let jobs = 1;
let only = null;
{
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i++) {
    if (a[i] === '--jobs') {
      const v = a[++i];
      if (v !== '1' && v !== '2') usage(`--jobs takes 1 or 2 (the two lanes), not '${v ?? ''}'`);
      jobs = +v;
    } else if (a[i] === '--only') {
      only = (a[++i] || '').split(',').filter(Boolean);
      if (!only.length) usage('--only takes test labels or file names separated by commas');
      const known = new Set(TESTS.flatMap((t) => [t.label, t.file]));
      const unknown = only.filter((n) => !known.has(n));
      if (unknown.length)
        usage(
          `--only: no test ${unknown.join(', ')}; the tests: ${TESTS.map((t) => t.label).join(', ')}`,
        );
    } else if (a[i] === '-h' || a[i] === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (a[i].startsWith('-') || url) usage(`unknown argument '${a[i]}'`);
    else url = a[i];
  }
  if (!/^https?:\/\//.test(url)) usage(`give the page's address (http://HOST:PORT/), not '${url}'`);
}
const fixture = process.env.ATTNLAB_FIXTURE || '';
const chosen = TESTS.filter((t) => !only || only.includes(t.label) || only.includes(t.file));
const missing = chosen.filter((t) => t.fixture && !fixture).map((t) => t.label);
if (missing.length) {
  usage(
    `${missing.join(', ')} need the fixture: set ATTNLAB_FIXTURE to web/test/fixture.sh's folder ` +
      '(and serve its data)',
  );
}

const secs = (ms) => (ms / 1000).toFixed(0);
const running = new Map(); // child process → { test, chunks }
let stopping = false;

// Runs one test; resolves to { test, code, out, ms }. Its output is kept and printed when it ends
// (with --jobs 1 as it comes).
function runOne(test, ws) {
  const env = { ...process.env, ...test.env, ATTNLAB_BROWSER_WS: ws };
  if (test.own) delete env.ATTNLAB_BROWSER_WS;
  // As scripts/test.sh gave them: the fixture only to the tests that take it, the backend only where named.
  if (!test.fixture) delete env.ATTNLAB_FIXTURE;
  if (!test.env.ATTNLAB_BACKEND) delete env.ATTNLAB_BACKEND;
  if (!test.env.ATTNLAB_QUERY) delete env.ATTNLAB_QUERY;
  const t0 = Date.now();
  const child = spawn(process.execPath, [path.join(here, `${test.file}.mjs`), url], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks = [];
  running.set(child, { test, chunks });
  const take = (d) => {
    chunks.push(d);
    if (jobs === 1) process.stdout.write(d);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  return new Promise((resolve) => {
    child.on('error', (e) => take(Buffer.from(`could not start node: ${e.message}\n`)));
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({
        killed: child.killed,
        test,
        code: code ?? signal,
        out: Buffer.concat(chunks).toString(),
        ms: Date.now() - t0,
      });
    });
  });
}

const failures = [];
function report(r) {
  const head = `== ${r.test.label}: ${r.test.what} (web/test/${r.test.file}.mjs)`;
  if (jobs !== 1) process.stdout.write(`${head}\n${r.out}`);
  const ok = r.code === 0;
  const how = ok
    ? ''
    : r.killed
      ? ', stopped as another test failed'
      : `, FAILED with exit ${r.code}`;
  console.log(`   (${r.test.label}: ${secs(r.ms)} s${how})`);
  if (!ok && !r.killed) failures.push(r);
}

async function lane(tests, ws) {
  for (const test of tests) {
    if (stopping) return;
    if (jobs === 1) console.log(`== ${test.label}: ${test.what} (web/test/${test.file}.mjs)`);
    const r = await runOne(test, ws);
    report(r);
    if (r.code !== 0 && !stopping) {
      stopping = true;
      // The other lane's test is stopped: the run has failed.
      for (const c of running.keys()) c.kill('SIGTERM');
    }
  }
}

// Stopped from outside (Ctrl-C, CI's time limit): the running tests' output so far, then stop them.
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const [c, { test, chunks }] of running) {
      if (jobs !== 1)
        process.stdout.write(`== ${test.label} (stopped by ${sig})\n${Buffer.concat(chunks)}`);
      c.kill('SIGTERM');
    }
    process.exit(1);
  });
}

const t0 = Date.now();
let shared;
try {
  shared = await launchShared();
} catch (e) {
  console.error(`run.mjs: the shared Chromium did not start: ${e.message.split('\n')[0]}`);
  process.exit(1);
}
try {
  if (jobs === 1) await lane(chosen, shared.wsEndpoint);
  else {
    const lanes = ['webgpu', 'cpu'].map((l) => chosen.filter((t) => t.lane === l));
    await Promise.all(lanes.map((l) => lane(l, shared.wsEndpoint)));
  }
} finally {
  await shared.close().catch(() => {});
}
if (failures.length) {
  for (const f of failures) {
    const tail = f.out.trimEnd().split('\n').slice(-40).join('\n');
    console.log(
      `\nFAILED: ${f.test.label} (web/test/${f.test.file}.mjs ${JSON.stringify(f.test.env)}), ` +
        `exit ${f.code}; the end of its output:\n${tail}`,
    );
  }
  process.exit(1);
}
console.log(`   (${chosen.length} browser tests in ${secs(Date.now() - t0)} s, --jobs ${jobs})`);
