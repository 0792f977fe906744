import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDue, type Claimant } from '../../src/callbacks/lease.js';
import { insertRow } from '../../src/store/index.js';
import { dialects, freshDatabase, type FreshDatabase, onPostgres } from '../helpers/db.js';
import { accountRow } from '../tasks/support.js';

const NOW = 1_000_000;
const TIMEOUT_MS = 10_000;

/** The outbox rows of the test by name: when due, and the lease and status they start with. */
const ROWS: Array<{ key: string; due: number | null; status?: 'pending' | 'delivered'; lease?: [by: string, until: number] }> = [
  { key: 'later', due: NOW - 100 },
  { key: 'oldest', due: NOW - 900 },
  { key: 'future', due: NOW + 1 },
  { key: 'leased', due: NOW - 990, lease: ['other', NOW + 1] },
  { key: 'expired', due: NOW - 500, lease: ['dead', NOW] },
  { key: 'delivered', due: NOW - 999, status: 'delivered' },
  { key: 'not-finished', due: null },
];

describe.each(dialects())('the lease claim of the delivery outboxes on %s', (dialect) => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase(dialect);
    await fresh.database.tx(async (trx) => {
      await insertRow(trx, 'accounts', accountRow('acc'));
      for (const r of ROWS) {
        const common = { status: r.status ?? 'pending', attempts: 0, created_at: 0, locked_by: r.lease?.[0] ?? null, locked_until: r.lease?.[1] ?? null };
        await insertRow(trx, 'callbacks', { ...common, task_id: r.key, url: 'https://example.com/cb', due_at: r.due });
        if (r.due !== null)
          await insertRow(trx, 'account_events', {
            ...common,
            id: r.key,
            account_id: 'acc',
            type: 'balance.low',
            channel: 'webhook',
            url: null,
            body: '{}',
            due_at: r.due,
          });
      }
    });
  });
  afterAll(() => fresh.close());

  const claimant = (workerId: string): Claimant => ({ dialect, workerId, timeoutMs: TIMEOUT_MS, now: NOW });
  const keyOf = { callbacks: (r: { task_id: string }) => r.task_id, account_events: (r: { id: string }) => r.id };

  it.each(['callbacks', 'account_events'] as const)(
    'takes the oldest due of %s first, passes over live leases, future and finished rows, and leases what it takes',
    async (outbox) => {
      const key = keyOf[outbox] as (r: unknown) => string;
      const first = await fresh.database.tx((trx) => claimDue(trx, outbox, 2, claimant('w1')));
      expect(first.map(key).sort()).toEqual(['expired', 'oldest']);
      for (const r of first) expect(r).toMatchObject({ locked_by: 'w1', locked_until: NOW + TIMEOUT_MS + 30_000, status: 'pending' });
      const rest = await fresh.database.tx((trx) => claimDue(trx, outbox, 10, claimant('w2')));
      expect(rest.map(key)).toEqual(['later']);
      expect(await fresh.database.tx((trx) => claimDue(trx, outbox, 10, claimant('w3')))).toEqual([]);
    },
  );

  // SQLite has one writer; on PostgreSQL two claims at once must not wait for each other nor take the same row.
  onPostgres(dialect)('two claims at once take different rows, the second without waiting for the first (SKIP LOCKED)', async () => {
    await fresh.database.tx((trx) => trx.updateTable('account_events').set({ locked_by: null, locked_until: null }).execute());
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let firstClaimed!: (ids: string[]) => void;
    const firstIds = new Promise<string[]>((resolve) => (firstClaimed = resolve));
    const first = fresh.database.tx(async (trx) => {
      firstClaimed((await claimDue(trx, 'account_events', 1, claimant('a'))).map((r) => r.id));
      await held; // the first claim's transaction stays open, its row locked
    });
    const a = await firstIds;
    const second = fresh.database.tx(async (trx) => (await claimDue(trx, 'account_events', 1, claimant('b'))).map((r) => r.id));
    const b = await Promise.race([second, new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 3_000))]);
    release();
    await first;
    await second;
    // All leases cleared: 'leased' (the oldest due now) is free, and SKIP LOCKED hands the second claim the next.
    expect(a).toEqual(['leased']);
    expect(b).toEqual(['oldest']);
  });
});
