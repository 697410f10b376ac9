// No import circle among the page's modules (web/, without node_modules, pkg and the tests): the
// cards talk through web/page/events.js instead of importing each other's redraws. Prints every
// circle found and exits 1 if there is one. Usage: node web/test/imports.mjs (no browser needed).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pageModules } from './harness.mjs';

const web = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

// Each module's relative imports and re-exports (static ones: `import … from './x.js'`).
const graph = new Map(
  pageModules(web).map((f) => {
    const src = fs.readFileSync(f, 'utf8');
    const deps = [
      ...src.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/g),
    ].map((m) => path.resolve(path.dirname(f), m[1]));
    return [f, deps];
  }),
);

const circles = new Set();
function walk(node, stack) {
  for (const d of graph.get(node) || []) {
    const at = stack.indexOf(d);
    if (at >= 0) {
      const c = stack.slice(at);
      const k = c.indexOf([...c].sort()[0]);
      circles.add([...c.slice(k), ...c.slice(0, k)].map((x) => path.relative(web, x)).join(' → '));
    } else {
      walk(d, [...stack, d]);
    }
  }
}
for (const f of graph.keys()) walk(f, [f]);

for (const c of circles) console.log(`circle: ${c}`);
console.log(`${graph.size} modules, ${circles.size} import circles`);
process.exit(circles.size ? 1 : 0);
