// The presets' step of student.mjs with the other attention variant (CPU backend), run on its page after the
// presets' labels are checked: choosing synthesizer attention sizes the presets again, the middle
// preset's note then expects the synthesizer's own measured dev accuracy (MIDDLE_DEV in
// web/page/preset-notes.js, the runs' predictions in results/middle-preset/), the CLI's commands name the variant, and
// choosing vanilla again brings back the vanilla note.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert } from './harness.mjs';

const runs = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'results',
  'middle-preset',
);

// What the step needs from student.mjs: its page, named `step`, `S` (evaluate in the page, with
// an argument) and the steps' timeout.
export async function variantSteps({ page, step, S, TIMEOUT }) {
  await step(
    'presets: with synthesizer attention the middle preset expects its own measured accuracy, ' +
      'and the CLI commands name the variant',
    async () => {
      const before = await page.inputValue('#preset');
      const noteFor = async (variant) => {
        await page.check(`input[name=variant][value=${variant}]`);
        await page.selectOption('#preset', 'middle');
        // Choosing the variant sizes the presets again (its fit, the quick run's steps, the notes).
        await page.waitForFunction(
          (v) =>
            (v === 'synthesizer') ===
            /synthesizer attention|attnlab pretrain synthesizer/.test(
              document.getElementById('preset-note').textContent,
            ),
          variant,
          { timeout: TIMEOUT },
        );
        return S(async (v) => {
          const { MIDDLE_DEV, cliCommands } = await import('./web/page/preset-notes.js');
          return {
            note: document.getElementById('preset-note').textContent,
            more: document.getElementById('preset-more-text').textContent,
            dev: MIDDLE_DEV[v],
            middle: cliCommands('middle'),
            full: cliCommands('full'),
          };
        }, variant);
      };
      const syn = await noteFor('synthesizer');
      // The counts the page states are those of the runs' committed predictions on the built-in dev set.
      const gold = await S(async () =>
        (await import('./web/page/data.js')).builtinDev().map((r) => r[1]),
      );
      const scored = fs
        .readdirSync(runs)
        .filter((f) => /^synthesizer-.*\.dev\.predictions$/.test(f))
        .sort()
        .map(
          (f) =>
            fs
              .readFileSync(path.join(runs, f), 'utf8')
              .split('\n')
              .slice(0, gold.length)
              .filter((p, i) => p === gold[i]).length,
        );
      assert(
        JSON.stringify([...scored].sort()) === JSON.stringify([...syn.dev.runs].sort()) &&
          syn.dev.total === gold.length,
        `the page states ${syn.dev.runs.join(', ')} of ${syn.dev.total}; ${runs}'s synthesizer ` +
          `predictions score ${scored.join(', ')} of ${gold.length}`,
      );
      const pct = (c) => `${((100 * c) / syn.dev.total).toFixed(1)}%`;
      const lo = Math.min(...syn.dev.runs),
        hi = Math.max(...syn.dev.runs);
      // (Where the model does not fit this device the note is the CLI's commands instead.)
      const tooLarge = /^Too large for this device: use the CLI/.test(syn.note);
      assert(
        tooLarge
          ? syn.note.includes(syn.middle)
          : syn.note.includes(
              `With synthesizer attention expect about ${lo === hi ? pct(lo) : `${pct(lo)}–${pct(hi)}`} dev accuracy`,
            ) &&
              syn.more.includes(
                `${syn.dev.runs.slice(0, -1).join(', ')} and ${syn.dev.runs.at(-1)} right answers of ${syn.dev.total}`,
              ),
        `the synthesizer's middle note: “${syn.note}” “${syn.more}”`,
      );
      assert(
        syn.middle.startsWith(
          'attnlab corpus --birth_notes --out_dir notes; attnlab pretrain synthesizer notes/wiki.txt ' +
            '--n_layer 2 --n_head 8 --n_embd 128 --max_epochs 440 --lr_decay_epochs 440 ',
        ) &&
          /attnlab finetune synthesizer .*--max_epochs 30 /.test(syn.middle) &&
          /^attnlab pretrain synthesizer wiki\.txt/.test(syn.full),
        `the CLI's commands: ${syn.middle} | ${syn.full}`,
      );
      const van = await noteFor('vanilla');
      assert(
        !/synthesizer/.test(van.note) &&
          /^attnlab corpus --birth_notes --out_dir notes; attnlab pretrain vanilla /.test(
            van.middle,
          ),
        `back to vanilla: “${van.note}” ${van.middle}`,
      );
      // The page as the step found it (the preset chosen, no sizing under way: on SwiftShader a timed
      // run holds the GPU process, and with it the page's frames, for seconds).
      if (before !== 'middle') await page.selectOption('#preset', before);
      await S(async () => (await import('./web/page/form.js')).sizingSettled());
      const said = (n) => (n.match(/[^.]*xpect about .*?\)/) || [n])[0].trim();
      return `synthesizer: “${said(syn.note)}”; vanilla: “${said(van.note)}”`;
    },
  );
}
