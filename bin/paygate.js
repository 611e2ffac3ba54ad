#!/usr/bin/env node
// Paygate runs its TypeScript sources directly through Node 24's type stripping.
// `npm start`, `npm run …` and `npx paygate` put the pinned runtime of the
// install (the `node` package, node_modules/.bin/node) first on PATH. Started by
// an older Node anyway (`node bin/paygate.js` on a system Node 20), this file —
// plain JavaScript that any Node parses — hands over to that pinned runtime.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
const canStripTypes = major > 22 || (major === 22 && minor >= 18);

// `serve` runs with a smaller young generation than V8 picks on a large machine: V8
// grows its semi-spaces during start-up and keeps them, which alone put an idle
// gateway above 150 MB of RSS (docs/performance.md). V8 reads the flag only at
// start, so the process replaces itself (same pid) with one that has it, unless
// the operator set it already. PAYGATE_SEMI_SPACE_MB=0 keeps V8's own choice.
const semiSpaceMb = Number(process.env.PAYGATE_SEMI_SPACE_MB ?? 4);
const semiSpaceFlags =
  process.argv[2] === 'serve' &&
  semiSpaceMb > 0 &&
  !process.execArgv.some((flag) => flag.startsWith('--max-semi-space-size')) &&
  !(process.env.NODE_OPTIONS ?? '').includes('--max-semi-space-size')
    ? [`--max-semi-space-size=${semiSpaceMb}`]
    : [];

if (canStripTypes) {
  if (semiSpaceFlags.length > 0 && typeof process.execve === 'function') {
    process.execve(
      process.execPath,
      [
        process.execPath,
        ...process.execArgv,
        ...semiSpaceFlags,
        fileURLToPath(import.meta.url),
        ...process.argv.slice(2),
      ],
      process.env,
    );
  }
  // V8's compiled code of our modules and dependencies, kept on disk between runs: a command
  // starts without compiling the same code again. Inside the install, not in a shared /tmp
  // where another user could plant code; unwritable (a read-only install), it is skipped.
  module.enableCompileCache?.(fileURLToPath(new URL('../node_modules/.cache/paygate-compile-cache', import.meta.url)));
  await import('../src/cli/process-entry.ts');
} else {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    process.stderr.write(
      `paygate: Node.js ${process.versions.node} cannot run Paygate (it needs 22.18 or later), and the pinned Node.js 24 ` +
        `runtime is missing from node_modules: run "npm ci" (or "npm ci --omit=dev") in ${fileURLToPath(new URL('..', import.meta.url))}\n`,
    );
    process.exit(1);
  }
  const child = spawn(pinned, [...semiSpaceFlags, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  // Signals go to the gateway, which shuts down gracefully; its exit is ours.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
  });
}
