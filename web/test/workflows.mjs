// The GitHub workflows (.github/workflows/*.yml) cannot run from this project's machines, so this
// checks what can be checked here: each file is valid YAML with the shape GitHub expects (a name,
// triggers, jobs whose steps each `uses` an action or `run`s a command), every action is pinned to a
// major version, and every script of this repository that a step runs exists and is executable.
// ci.yml must run the README's test command, pages.yml must build with scripts/site.sh.
//   node web/test/workflows.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = path.join(root, '.github', 'workflows');
const failures = [];
const fail = (msg) => failures.push(msg);

// Repository paths a shell line runs: `scripts/x.sh`, `.ci/run`, `./scripts/y` at a command's start.
function scriptsIn(line) {
  const found = [];
  for (const cmd of line.split(/&&|\|\||;|\n|\|/)) {
    const word = cmd.trim().split(/\s+/)[0] || '';
    const p = word.replace(/^\.\//, '');
    if (/^(scripts|\.ci|web\/test)\//.test(p)) found.push(p);
  }
  return found;
}

const files = fs
  .readdirSync(dir)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();
if (!files.includes('ci.yml') || !files.includes('pages.yml'))
  fail(`expected ci.yml and pages.yml in ${dir}, found ${files}`);
const runs = {};
for (const f of files) {
  let doc;
  try {
    doc = parse(fs.readFileSync(path.join(dir, f), 'utf8'), { strict: true, uniqueKeys: true });
  } catch (e) {
    fail(`${f}: not valid YAML: ${e.message}`);
    continue;
  }
  if (typeof doc?.name !== 'string') fail(`${f}: no name`);
  if (!doc?.on) fail(`${f}: no triggers (on:)`);
  if (!doc?.jobs || typeof doc.jobs !== 'object') {
    fail(`${f}: no jobs`);
    continue;
  }
  runs[f] = [];
  for (const [id, job] of Object.entries(doc.jobs)) {
    if (!job['runs-on']) fail(`${f}: job ${id} has no runs-on`);
    if (!Array.isArray(job.steps) || job.steps.length === 0) {
      fail(`${f}: job ${id} has no steps`);
      continue;
    }
    for (const [i, step] of job.steps.entries()) {
      const where = `${f}: job ${id}, step ${i + 1}`;
      if (!!step.uses === !!step.run) fail(`${where}: needs exactly one of uses and run`);
      if (step.uses && !/^[\w.-]+\/[\w./-]+@v\d+$/.test(step.uses))
        fail(`${where}: ${step.uses} is not owner/action@vN`);
      if (step.run) {
        runs[f].push(step.run);
        for (const s of scriptsIn(step.run)) {
          const p = path.join(root, s);
          if (!fs.existsSync(p)) fail(`${where}: runs ${s}, which does not exist`);
          else if ((fs.statSync(p).mode & 0o111) === 0)
            fail(`${where}: runs ${s}, which is not executable`);
        }
      }
    }
  }
}
if (runs['ci.yml'] && !runs['ci.yml'].some((r) => scriptsIn(r).includes('.ci/run')))
  fail("ci.yml does not run .ci/run (the README's test command)");
if (runs['pages.yml'] && !runs['pages.yml'].some((r) => scriptsIn(r).includes('scripts/site.sh')))
  fail('pages.yml does not build with scripts/site.sh');
const ciRun = fs.readFileSync(path.join(root, '.ci', 'run'), 'utf8');
if (!/scripts\/test\.sh/.test(ciRun)) fail('.ci/run does not run scripts/test.sh');

if (failures.length) {
  for (const m of failures) console.error(`FAIL ${m}`);
  process.exit(1);
}
console.log(
  `workflows: ${files.join(', ')} parse, their actions are pinned and the scripts they run exist`,
);
