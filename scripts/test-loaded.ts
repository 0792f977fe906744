/**
 * `npm run test:loaded`: the whole test suite (`vitest run`, with any arguments given) while busy
 * processes keep every core at 100 % (LOADED_BUSY, default 2: both cores of the project's machines).
 * A test that passes only on a quiet machine fails here: time must come from an injected clock or
 * from events, never from a sleep and a count or a wall-clock bound. Exits with vitest's code.
 */
import { spawn, type ChildProcess } from 'node:child_process';

const busyCount = Number(process.env.LOADED_BUSY ?? 2);
if (!Number.isInteger(busyCount) || busyCount < 0) throw new Error(`LOADED_BUSY must be a whole number (got ${process.env.LOADED_BUSY})`);

// Plain spinning loops at normal priority: they compete with the suite for every core.
const busy: ChildProcess[] = Array.from({ length: busyCount }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const stopBusy = () => {
  for (const b of busy) b.kill('SIGKILL');
};
process.on('exit', stopBusy);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopBusy();
    process.exit(130);
  });
}

console.log(`test:loaded: ${busyCount} busy process(es) (pids ${busy.map((b) => b.pid).join(', ')}) while the suite runs`);
const started = Date.now();
const vitest = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)], { stdio: 'inherit' });
vitest.on('exit', (code, signal) => {
  stopBusy();
  console.log(`test:loaded: vitest ended with ${signal ?? code} after ${Math.round((Date.now() - started) / 1000)} s under load`);
  process.exit(code ?? 1);
});
