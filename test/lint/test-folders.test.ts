import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Issue 31: test/ mirrors src/, so a change's tests are found beside its folder's name. A test of
 * src/X/ lives in test/X/; a test of a top-level module of src/ (ids.ts, errors.ts) directly in
 * test/. Only the folders below test what crosses folders, or what is not in src/ at all.
 */
export const CROSS_CUTTING: Record<string, string> = {
  chaos: 'the abuse run over the whole system (npm run chaos)',
  client: 'the TypeScript SDK (packages/client)',
  clients: 'the other SDKs (clients/python)',
  console: 'the web console (console/) in Chromium',
  docs: 'the documents (README, docs/)',
  e2e: 'GenGate end to end, against real clients or another GenGate',
  fakes: 'stand-ins for the external services (providers, Stripe)',
  fuzz: 'property-based checks of every endpoint',
  helpers: 'what the tests share (servers, databases, tools, the CLI)',
  lint: 'checks of the code itself (import rules, layers, this layout)',
  ops: 'the program as an operator runs it: the build, start-up, health, memory',
  scale: 'several processes over one database (roles, wake-ups, frozen workers)',
};

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The folders of `p` that hold files (git keeps no empty folder). */
const dirs = (p: string) =>
  readdirSync(path.join(ROOT, p)).filter(
    (n) => statSync(path.join(ROOT, p, n)).isDirectory() && readdirSync(path.join(ROOT, p, n), { recursive: true }).length > 0,
  );

describe('test folders', () => {
  it('each names a folder of src/ or is one of the few cross-cutting ones', () => {
    const src = new Set(dirs('src'));
    const strays = dirs('test').filter((d) => !src.has(d) && !(d in CROSS_CUTTING));
    expect(strays, `move their tests to test/<folder of src/> or list the folder in ${path.relative(ROOT, import.meta.filename)}`).toEqual([]);
  });

  it('the cross-cutting list names no folder of src/ (its tests would belong there) and no folder that is gone', () => {
    const src = new Set(dirs('src'));
    const test = new Set(dirs('test'));
    expect(Object.keys(CROSS_CUTTING).filter((d) => src.has(d) || !test.has(d))).toEqual([]);
  });
});
