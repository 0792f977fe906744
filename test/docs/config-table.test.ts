import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { configSchema } from '../../src/config.js';

it('the README configuration table has a row for every setting', () => {
  const rows = readFileSync('README.md', 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('| `'));
  const named = new Set(rows.flatMap((r) => [...r.split('|')[1]!.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!)));
  const missing = Object.keys(configSchema.shape).filter((k) => !named.has(k));
  expect(missing).toEqual([]);
});
