import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { BetterConnection, NodeConnection } from '../../src/store/sqlite-driver.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

// Every statement this test process sends to either database, by its SQL text (the SQLite seam of
// both libraries and the PostgreSQL client are wrapped once, for this file only: vitest runs each
// test file in its own worker).
const sent: string[] = [];
let recording = false;
for (const cls of [NodeConnection, BetterConnection]) {
  const proto = cls.prototype as unknown as { prepare: (text: string) => Record<string, (...a: unknown[]) => unknown> };
  const prepare = proto.prepare;
  proto.prepare = function (this: unknown, text: string) {
    const stmt = prepare.call(this, text);
    for (const m of ['run', 'all', 'value', 'iterate']) {
      const f = stmt[m]!;
      stmt[m] = function (this: unknown, ...a: unknown[]) {
        if (recording) sent.push(text);
        return f.apply(this, a);
      };
    }
    return stmt;
  };
}
const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
pg.Client.prototype.query = function (this: unknown, ...a: unknown[]) {
  const q = a[0] as string | { text: string };
  if (recording) sent.push(typeof q === 'string' ? q : q.text);
  return query.apply(this, a);
} as typeof pg.Client.prototype.query;

/** 0.060 USD. */
const IMAGE = { model: 'nano-banana-2', input: { prompt: 'a red fox', resolution: '2K' } };
const ADMIN = 'admin-token-for-tests-0123456789';

/** The writes (and transaction control) one createTask sends, as `verb table`. */
async function writesOfOneCreate(s: TestServer, key: string): Promise<string[]> {
  sent.length = 0;
  recording = true;
  const r = await s.call('POST', '/api/v1/jobs/createTask', { key, body: IMAGE });
  recording = false;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return sent
    .map((text) => text.trim().toLowerCase())
    .filter((text) => /^(insert|update|delete|begin|commit|rollback)\b/.test(text))
    .map((text) => /^(begin|commit|rollback)\b/.exec(text)?.[1] ?? /^(insert into|update|delete from)\s+"?(\w+)/.exec(text)!.slice(1).join(' '));
}

describe.each(dialects())('the statements of a createTask on %s', (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(dialect, { ADMIN_TOKEN: ADMIN, RUN_ENGINE: 'false' });
  });
  afterAll(() => s.close());

  const core = ['update accounts', 'insert into ledger_entries', 'insert into tasks', 'insert into task_events'];

  it('a key without a budget, no alert, no callback, no Idempotency-Key: four statements in one transaction, no spend counters', async () => {
    const { key } = await s.account(1);
    await writesOfOneCreate(s, key);
    expect(await writesOfOneCreate(s, key)).toEqual(['begin', ...core, 'commit']);
  });

  it('a key with a budget also reads and moves its spend counters', async () => {
    const { id } = await s.account(1);
    const made = await s.call('POST', `/admin/v1/accounts/${id}/keys`, { body: { budget: { amount: '1' } }, headers: { authorization: `Bearer ${ADMIN}` } });
    const key = made.body.data.apiKey as string;
    await writesOfOneCreate(s, key);
    const writes = await writesOfOneCreate(s, key);
    expect(writes.filter((w) => w !== 'begin' && w !== 'commit')).toEqual([core[0], core[1], 'insert into key_spend', core[2], core[3]]);
  });
});
