// A second scripts/serve.py for the tests that compare the cross-origin isolated page with the
// page behind a server without COEP (`--no-isolation`: no SharedArrayBuffer, so the CPU engines
// copy buffers): web/test/workers.mjs, web/test/eval-workers.mjs.
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// A server without COEP at `given` (a URL), else one started on a free port, serving DIR/data
// when ATTNLAB_FIXTURE=DIR is set (both servers must serve the same data). Resolves to {base, stop}.
export async function plainServer(given) {
  if (given) return { base: given, stop: () => {} };
  const port = await freePort();
  const data = process.env.ATTNLAB_FIXTURE
    ? ['--data', path.join(process.env.ATTNLAB_FIXTURE, 'data')]
    : [];
  const proc = spawn(
    'python3',
    [
      path.join(here, '..', '..', 'scripts', 'serve.py'),
      '--port',
      String(port),
      '--quiet',
      '--no-isolation',
      ...data,
    ],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 50; i++) {
    const ok = await new Promise((r) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.end();
        r(true);
      });
      c.on('error', () => r(false));
    });
    if (ok) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return { base: `http://127.0.0.1:${port}/`, stop: () => proc.kill() };
}
