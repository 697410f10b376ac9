// The CPU backend's steps of student.mjs, run on its page after the others: where the page's
// memory check (the CPU backend's 2 GiB in wasm32) decides whether a run starts, every batch the
// page offers starts.
//   - after the middle preset pretrains, Finetune takes the preset's pretrained settings and,
//     pressed the moment the pretraining ends, starts;
//   - a finetune from the current model at the batch fit offers starts: its copy of the model
//     is made after the check, which counts the copy's weights once (made before, it was counted
//     twice and the batch offered was refused);
//   - the full preset at the batch offered starts and stops.
import { assert } from './harness.mjs';

// What the steps need from student.mjs: its page, named `step`, `S` (evaluate in the page, with
// an argument) and the steps' timeout.
export async function cpuSteps({ page, step, S, TIMEOUT }) {
  await step(
    'CPU backend: after the middle preset pretrains, Finetune is set to its pretrained ' +
      'finetune (30 epochs from the model) and, pressed at once, starts',
    async () => {
      await page.click('#use-embedded');
      await page.selectOption('#h-from', 'scratch');
      await page.selectOption('#preset', 'middle');
      const before = await page.inputValue('#h-ft_epochs');
      const finished = await S(() => window.__page.finished);
      await page.click('#btn-pretrain');
      // Stop after its first step: the run ends as a stopped pretraining (before it, nothing is kept).
      await page.waitForFunction(
        () => window.__page.status === 'running' && window.__page.steps >= 1,
        null,
        { timeout: TIMEOUT },
      );
      // Finetune is pressed the moment the pretraining has ended and starts (the page waits for the
      // batches fitted again beside the model just kept). A refusal here would come from the
      // finetune's copy counted twice, which this small model's slack hides: the next step checks
      // that.
      await page.evaluate((n) => {
        window.__page.error = null;
        const t = setInterval(() => {
          const b = document.getElementById('btn-finetune');
          if (window.__page.finished > n && window.__page.status === 'idle' && !b.disabled) {
            clearInterval(t);
            b.click();
          }
        }, 0);
      }, finished);
      await page.click('#btn-stop');
      await page
        .waitForFunction(
          (n) =>
            window.__page.finished > n &&
            (window.__page.status === 'running' || window.__page.error),
          finished,
          { timeout: 60000 },
        )
        .catch(async () => {
          const state = await S(() => ({
            status: window.__page.status,
            error: window.__page.error,
            finished: window.__page.finished,
            steps: window.__page.steps,
            shown: document.getElementById('train-error').textContent,
            progress: document.getElementById('progress-text').textContent,
          }));
          throw new Error(`Finetune did not start: ${JSON.stringify(state)}`);
        });
      const after = {
        from: await page.inputValue('#h-from'),
        epochs: await page.inputValue('#h-ft_epochs'),
        preset: await page.inputValue('#preset'),
      };
      assert(
        before === '75' &&
          after.from === 'model' &&
          after.preset === 'middle' &&
          after.epochs === '30',
        `before ${before}, after ${JSON.stringify(after)}`,
      );
      const ft = await S(() => ({ status: window.__page.status, error: window.__page.error }));
      assert(
        ft.status === 'running' && !ft.error,
        `Finetune pressed as the pretraining ended: ${ft.error}`,
      );
      await page.click('#btn-stop');
      await page.waitForFunction(() => window.__page.status === 'idle', null, { timeout: TIMEOUT });
      return (
        `finetune epochs ${before} (from scratch) → ${after.epochs} (from the model), ` +
        `preset ${after.preset}; Finetune pressed at once started at ` +
        `batch ${await page.inputValue('#h-ft_batch')}`
      );
    },
  );

  await step(
    'CPU backend: a finetune from the current model at the batch the page fits starts (its copy counted once)',
    async () => {
      // A model whose weights (49 MiB) outweigh a row of its training step (the fit's slack is under
      // a row), pretrained for one step of one row, so the finetune's batch is the largest that fits.
      await page.click('#use-embedded');
      for (const [k, v] of Object.entries({
        n_layer: '1',
        n_head: '8',
        n_embd: '1024',
        pre_batch: '1',
        max_steps: '1',
      }))
        await page.fill(`#h-${k}`, v);
      const finished = await S(() => window.__page.finished);
      await page.click('#btn-pretrain');
      await page.waitForFunction(
        (n) => window.__page.finished > n && window.__page.status === 'idle',
        finished,
        { timeout: TIMEOUT },
      );
      assert(
        (await page.inputValue('#h-from')) === 'model',
        'Finetune does not start from the pretrained model',
      );
      // The engine's own calls, as the page makes them: the fit, then the start at that batch (not
      // stepped: its first step at this batch would take minutes), dropped again.
      const r = await S(async () => {
        const { P, data } = await import('./web/page/core.js');
        const { readSpec } = await import('./web/page/form.js');
        const fit = await P.engine.fit('vanilla', 1, 8, 1024, data.wiki.vocab || 100, 512);
        document.getElementById('h-ft_batch').value = String(fit);
        const spec = await readSpec('finetune');
        try {
          const st = await P.engine.start(
            spec,
            data.wiki.name,
            data.wiki.text,
            data.train.name,
            data.train.text,
          );
          await P.engine.drop_run();
          return { fit, steps: st.total_steps };
        } catch (e) {
          return { fit, error: String(e.message || e) };
        }
      });
      assert(r.fit > 1 && r.fit < 512, `the fit does not limit the batch: ${r.fit}`);
      assert(!r.error, `refused at the batch the page fitted (${r.fit}): ${r.error}`);
      return `batch ${r.fit} (the largest that fits beside the loaded models) started: ${r.steps} step`;
    },
  );

  await step(
    'CPU backend: the full preset at the batch offered starts (not refused) and stops',
    async () => {
      await page.click('#use-embedded');
      await page.selectOption('#preset', 'full');
      await S(() => {
        window.__page.error = null;
      });
      await page.click('#btn-pretrain');
      await page.waitForFunction(
        () =>
          ['running', 'idle'].includes(window.__page.status) &&
          (window.__page.status === 'running' || window.__page.error),
        null,
        { timeout: TIMEOUT },
      );
      const s = await S(() => ({ status: window.__page.status, error: window.__page.error }));
      assert(s.status === 'running' && !s.error, `not started: ${s.error}`);
      const models = await S(() => window.__page.models.map((m) => m.label));
      await page.click('#btn-stop');
      await page.waitForFunction(() => window.__page.status === 'idle', null, { timeout: TIMEOUT });
      // Stopped inside its first step (a full-size step is taken in parts): no model of 0 steps
      // replaces the student's, and the page says so.
      const end = await S(() => ({
        steps: window.__page.steps,
        models: window.__page.models.map((m) => m.label),
      }));
      const said = await page.textContent('#train-status');
      if (end.steps === 0) {
        assert(/before the first step/.test(said), `stopped at step 0 and the page says: ${said}`);
        assert(
          JSON.stringify(end.models) === JSON.stringify(models),
          `models changed by a run of 0 steps: ${JSON.stringify(models)} → ${JSON.stringify(end.models)}`,
        );
      }
      assert(
        !end.models.some((l) => /, 0 steps/.test(l)),
        `a model of 0 steps was kept: ${JSON.stringify(end.models)}`,
      );
      return `batch ${await page.inputValue('#h-pre_batch')}, stopped at step ${end.steps}: ${said}`;
    },
  );
}
