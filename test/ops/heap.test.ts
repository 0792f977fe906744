import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { HEAP_GROWING_PERCENT, tuneHeap } from '../../src/cli/heap.js';
import { GENGATE, SERVE_START_MS, stop } from '../helpers/cli.js';
import { UNLIMITED } from '../helpers/server.js';

/**
 * The growing factors V8 applied at the full collections of a `--trace-gc-verbose` trace. V8 11
 * and 12 (Node 20, 22) end each limit line with the factor applied ("[HeapController] Limit: old
 * size: N KB, new limit: M KB (2.0)"), after a line with the factor its own heuristics chose; V8
 * 13 and 14 (Node 24, 26) print no factor on the limit line, and their "[HeapController] factor F
 * based on ..." line is the one applied, a flag's included (checked on each line).
 */
function appliedFactors(trace: string): string[] {
  const limits = [...trace.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)/g)].map((m) => m[1]!);
  if (limits.length > 0) return limits;
  return [...trace.matchAll(/\[HeapController\] factor ([\d.]+) based on/g)].map((m) => m[1]!);
}

/**
 * Runs a node process that (when `tune`) calls tuneHeap, fills the heap a little and runs one full
 * collection with V8's trace on; returns the growing factor V8 applied to the new limit ("(2.0)").
 */
function factorApplied(tune: boolean): Promise<string> {
  const script = [
    "const { tuneHeap } = await import('./src/cli/heap.ts');",
    tune ? 'tuneHeap();' : '',
    'const kept = []; for (let i = 0; i < 200000; i++) kept.push({ i });',
    'globalThis.gc();',
  ].join('\n');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', '--trace-gc-verbose', '--import', 'tsx', '--input-type=module', '-e', script],
      { maxBuffer: 16 * 1024 * 1024 },
      (err, stdout) => {
        if (err) return reject(err);
        const [factor] = appliedFactors(stdout);
        if (!factor) return reject(new Error(`no growing factor in V8's trace:\n${stdout.slice(0, 2000)}`));
        resolve(factor);
      },
    );
  });
}

/** Decision 0317: uploads on a server that has been busy must not run a full collection every 20-30 MB. */
describe('the heap growing factor of a serve process', () => {
  it('is what tuneHeap sets, in place of the factor V8 would choose', async () => {
    const [own, tuned] = await Promise.all([factorApplied(false), factorApplied(true)]);
    // V8's own factor for a first collection is its largest (4.0), so the two differ only if the flag took effect.
    expect(own).not.toBe(tuned);
    expect(Number(tuned)).toBe(1 + HEAP_GROWING_PERCENT / 100);
  });

  it('leaves a factor given to node on its command line alone', () => {
    expect(tuneHeap(['--heap-growing-percent=50'])).toBeNull();
    expect(tuneHeap(['--heap_growing_percent=50'])).toBeNull();
  });

  it('is set in a running serve process', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gengate-heap-'));
    // The inspector lets the test ask for a full collection once the server listens: with only its
    // own collections, Node 26's serve ran none in 40 s after start-up.
    const child = spawn(process.execPath, ['--trace-gc-verbose', '--inspect=127.0.0.1:0', ...GENGATE, 'serve'], {
      env: { ...process.env, DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'warn', FIRST_RUN_ACCOUNT: 'false', MODERATION_IMAGES: 'off', ...UNLIMITED },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out.slice(-2000)}`)), SERVE_START_MS);
        child.stdout.on('data', () => {
          if (/listening on http:\/\/\S+/.test(out)) resolve();
        });
        child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${err.slice(-2000)}`)));
        child.on('exit', () => clearTimeout(timer));
      });
      const since = out.length;
      const limits = () => appliedFactors(out.slice(since));
      const inspector = /ws:\/\/\S+/.exec(err)?.[0];
      expect(inspector, err).toBeDefined();
      const socket = new WebSocket(inspector!);
      await once(socket, 'open');
      socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
      await once(socket, 'message');
      socket.close();
      // V8 prints the collection's trace before it answers; the pipe may hand it over a little later.
      while (limits().length === 0) await once(child.stdout, 'data');
      expect(new Set(limits())).toEqual(new Set([(1 + HEAP_GROWING_PERCENT / 100).toFixed(1)]));
    } finally {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
