// Every engine call names a method of the engine's client: the page reaches the engine only through
// web/engine.js, whose methods the type check (`cd web && npx tsc -p tsconfig.json`) holds to the
// wasm Engine's (web/pkg/attnlab.d.ts). This holds the other end: every `engine.NAME(…)` and
// `helper.NAME(…)` (a helper engine, web/helpers.js) in web/ (the page's modules and the tests; not
// node_modules or pkg) must be a method of the client (METHODS, or `with`), else it would only fail
// when a user reached that control. It prints the calls that are not, exits 1 if there is one, and
// lists the methods nothing here calls.
// Usage: node web/test/calls.mjs (no browser, no build needed).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pageModules } from './harness.mjs';
import { METHODS } from '../engine.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const web = path.join(here, '..');
const known = new Set([...METHODS, 'with']);

const files = [
  ...pageModules(web).filter((f) => path.basename(f) !== 'engine.js'),
  ...fs
    .readdirSync(here)
    .filter((f) => f.endsWith('.mjs') && f !== 'calls.mjs')
    .map((f) => path.join(here, f)),
];
const unknown = [];
const called = new Set();
for (const f of files) {
  fs.readFileSync(f, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (/^\s*\/\//.test(line)) return;
      // The page's engine is `engine` (P.engine on the training page), a helper engine `helper`;
      // `.with({…})` gives the same client with call options.
      for (const m of line.matchAll(
        /\b(engine|helper)(?:\.with\([^)]*\))?\.([A-Za-z_][A-Za-z0-9_]*)\s*\(/g,
      )) {
        called.add(m[2]);
        if (!known.has(m[2]))
          unknown.push(
            `${path.relative(web, f)}:${i + 1}: ${m[1]}.${m[2]}(…) is not a method of the ` +
              "engine's client (web/engine.js METHODS)",
          );
      }
    });
}
const uncalled = METHODS.filter((m) => !called.has(m));
console.log(
  `${called.size} engine methods called in web/, ${METHODS.length} in the client (web/engine.js)`,
);
if (uncalled.length) console.log(`methods nothing in web/ calls: ${uncalled.join(', ')}`);
if (unknown.length) {
  for (const u of unknown) console.error(u);
  process.exit(1);
}
