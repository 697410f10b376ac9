// The device's measurement: before a first run, a few training steps of the tiny model at two batch
// sizes, three steps of the middle preset's model at 8 rows and three of the assignment's at 2
// rows (one each on a slow device), through time_step in src/wasm/measure.rs, the fastest kept
// (other work only adds time). Kept in this browser per device, so a reload need not measure
// again; web/page/sizing.js turns it into each preset's time here. The first step of a measurement
// is slower (it builds the kernels' pipelines and buffers once); the presets' note says so.
import { $, P, S, job } from './core.js';

const VERSION = 4; // measurements kept by an earlier page (other models timed) are taken again
const KEY = 'attnlab-sizing';

let measuring = null;

// What the Train card says while no run is open: "Ready" only once this device is measured (the
// presets' sizes and times follow from it); until then, that it is being measured.
export const READY = 'Ready: press Pretrain to start with the chosen preset.';
export const MEASURING = 'Measuring this device (a few training steps of each preset’s model)…';
export const measured = () => Boolean(S.sizing || saved(P.deviceKey));
// The measurement ended (or failed: a run measures again when it starts): the card's "Measuring"
// becomes "Ready", whatever follows it kept.
function measureEnded() {
  const el = $('train-status');
  if (S.status !== 'idle' || !el || !el.textContent.startsWith(MEASURING)) return;
  el.textContent = READY + el.textContent.slice(MEASURING.length);
}
// The attention variant chosen in the Train card.
export const variantNow = () => document.querySelector('input[name=variant]:checked').value;

// Milliseconds a step of `rows` rows takes: a + b·rows, fitted to two measured batch sizes.
function stepModel(small, large) {
  const b =
    large.rows > small.rows
      ? (large.ms_per_step - small.ms_per_step) / (large.rows - small.rows)
      : 0;
  const slope = b > 0 ? b : large.ms_per_step / large.rows;
  const a = Math.max(0, small.ms_per_step - slope * small.rows);
  return (rows) => a + slope * rows;
}

// The measurement kept in this browser for this device (a reload need not measure again).
function saved(deviceKey) {
  try {
    const z = JSON.parse(localStorage.getItem(KEY) || 'null');
    return z &&
      z.version === VERSION &&
      z.device === deviceKey &&
      z.small &&
      z.large &&
      z.mid &&
      z.full
      ? z
      : null;
  } catch {
    return null;
  }
}

// Keeps a measurement (with the quick preset's timed runs, sizing.js) in this browser.
export function keep(z) {
  try {
    localStorage.setItem(KEY, JSON.stringify(z));
  } catch {
    /* storage can be off */
  }
}

// Measure once per device (kept in localStorage). Resolves to S.sizing = {small, large, full,
// seconds, device}, each measurement {rows, first_ms, ms_per_step}.
export function measure(deviceKey) {
  if (S.sizing) {
    measureEnded();
    return Promise.resolve(S.sizing);
  }
  const kept = saved(deviceKey);
  if (kept) {
    S.sizing = kept;
    measureEnded();
    return Promise.resolve(kept);
  }
  if (!measuring) {
    measuring = (async () => {
      const p = P.presets;
      const variant = variantNow();
      const vocab = 100;
      $('preset-note').textContent = MEASURING;
      const t0 = performance.now();
      const time = (cfg, rows, repeats) =>
        job('measure', () =>
          P.engine.time_step(variant, cfg.n_layer, cfg.n_head, cfg.n_embd, vocab, rows, repeats),
        );
      const small = await time(p.tiny, 4, 2);
      const large = await time(p.tiny, 16, 1);
      // Where the tiny model's step takes over a second (a software adapter), the larger models'
      // steps take seconds each, long beside their noise: one timed step after the first, not three
      // (on SwiftShader the measurement took 79 s, 33 of them repeats, before a first run could start).
      const repeats = small.ms_per_step > 1000 ? 1 : 3;
      const mid = await time(p.middle, 8, repeats);
      const full = await time(p.assignment, 2, repeats);
      S.sizing = {
        small,
        large,
        mid,
        full,
        seconds: (performance.now() - t0) / 1000,
        device: deviceKey,
        version: VERSION,
      };
      keep(S.sizing);
      measureEnded();
      return S.sizing;
    })();
    measuring.catch(() => {
      measuring = null;
      measureEnded();
    });
  }
  return measuring;
}

// Step times from a measurement, in milliseconds for `rows` rows of which `fill` of the positions
// are real (packed): tiny (a + b·rows·fill, fitted to two batch sizes), mid and full (their
// measured time per row × rows × fill).
export function stepTimes(z) {
  const tiny = stepModel(z.small, z.large);
  const perRow = (m) => (m.best_ms ?? m.ms_per_step) / m.rows;
  return {
    tiny: (rows, fill = 1) => tiny(rows * fill),
    mid: (rows, fill = 1) => perRow(z.mid) * rows * fill,
    full: (rows, fill = 1) => perRow(z.full) * rows * fill,
  };
}
