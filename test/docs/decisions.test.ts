import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** Issue 16: every decision record says whether it is in force (accepted) or which record replaced it. */
describe('decision records', () => {
  const dir = 'docs/decisions';
  const records = readdirSync(dir).filter((f) => /^\d{4}-.+\.md$/.test(f));

  it('each has a Status line: accepted, or superseded by an existing record', () => {
    expect(records.length).toBeGreaterThan(30);
    const numbers = new Set(records.map((f) => f.slice(0, 4)));
    for (const f of records) {
      const status = /^Status: (.+)$/m.exec(readFileSync(`${dir}/${f}`, 'utf8'))?.[1];
      expect(status, f).toMatch(/^(accepted|superseded by \d{4})/);
      const by = /superseded by (\d{4})/.exec(status!)?.[1];
      if (by && status!.startsWith('superseded')) expect(numbers.has(by), `${f}: ${by}`).toBe(true);
    }
  });
});
