// Every call the page makes into the engine names a function the wasm module exports: the page calls
// the engine's exports by name (`wasm.page_train(…)`, web/backend.js turns each into a message to
// the worker), so a misspelt or deleted export would only fail when a user reached that control.
// This reads every `wasm.NAME` (and a helper engine's `helper.NAME`) in web/ (not node_modules, pkg or the tests) and the exports of
// web/pkg/attnlab.js (scripts/build-web.sh makes it), prints the names that are not exports and
// exits 1 if there is one (calls with options, callWith(engine, 'NAME', …), count too); it also lists exports no page module calls (the tests may).
// Usage: node web/test/calls.mjs (no browser needed).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pageModules } from './harness.mjs';

const web = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

const pkg = path.join(web, 'pkg', 'attnlab.js');
if (!fs.existsSync(pkg)) {
  console.error(
    `${path.relative(process.cwd(), pkg)} is missing: build the wasm module first (scripts/build-web.sh)`,
  );
  process.exit(1);
}
const exported = new Set(
  [...fs.readFileSync(pkg, 'utf8').matchAll(/^export (?:async )?function ([A-Za-z0-9_]+)/gm)].map(
    (m) => m[1],
  ),
);

const unknown = [];
const called = new Set();
for (const f of pageModules(web)) {
  const lines = fs.readFileSync(f, 'utf8').split('\n');
  lines.forEach((line, i) => {
    // The page's engine is `wasm`, a helper engine (web/helpers.js) `helper`.
    for (const m of line.matchAll(/\b(wasm|helper)\.([A-Za-z_][A-Za-z0-9_]*)/g)) {
      called.add(m[2]);
      if (!exported.has(m[2]))
        unknown.push(
          `${path.relative(web, f)}:${i + 1}: ${m[1]}.${m[2]} is not an export of pkg/attnlab.js`,
        );
    }
    // A call with options (web/backend.js callWith(engine, 'NAME', …)) names the export as a string.
    for (const m of line.matchAll(/\bcallWith\([^,]+,\s*'([A-Za-z_][A-Za-z0-9_]*)'/g)) {
      called.add(m[1]);
      if (!exported.has(m[1]))
        unknown.push(
          `${path.relative(web, f)}:${i + 1}: callWith(…, '${m[1]}') is not an export of pkg/attnlab.js`,
        );
    }
  });
}
const uncalled = [...exported].filter((e) => !called.has(e)).sort();
console.log(`${called.size} engine functions called by the page, ${exported.size} exported`);
if (uncalled.length) console.log(`exported, not called by a page module: ${uncalled.join(', ')}`);
if (unknown.length) {
  for (const u of unknown) console.error(u);
  process.exit(1);
}
