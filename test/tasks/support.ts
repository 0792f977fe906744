import { createHash } from 'node:crypto';
import type { Insertable } from 'kysely';
import { expect } from 'vitest';
import type { Clock } from '../../src/clock.js';
import type { Database } from '../../src/store/db.js';
import type { AccountsTable, TasksTable } from '../../src/store/schema.js';
import type { TestServer } from '../helpers/server.js';

/** A clock tests can move forward: real time plus an offset (the engine still runs on real timers). */
export class MovableClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  advance(ms: number): void {
    this.offset += ms;
  }
}

/** A clock the test sets to a moment (budgets count UTC days and months; usage groups by days). */
export class SetClock implements Clock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  set(iso: string): void {
    this.t = Date.parse(iso);
  }
}

/** Rate limits (issue 6) out of the way: these tests poll and create far faster than a client may. */
export const UNLIMITED: Record<string, string> = { RATE_LIMIT_WRITE: '1000000', RATE_LIMIT_READ: '1000000' };

/** Settings that make the local backend and the engine quick enough for tests. */
export const FAST: Record<string, string> = {
  ...UNLIMITED,
  LOCAL_QUEUE_MS: '0',
  LOCAL_GENERATE_MS: '0',
  ENGINE_POLL_MS: '20',
  ENGINE_RETRY_MS: '0',
};

/** Creates a task and returns its id, failing the test on anything but 200. */
export async function create(s: TestServer, key: string, model: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await s.call('POST', '/api/v1/jobs/createTask', { key, body: { model, input, ...extra } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.taskId as string;
}

/** recordInfo's data for a task. */
export async function info(s: TestServer, key: string, taskId: string): Promise<any> {
  const r = await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(taskId)}`, { key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
}

/** Polls recordInfo until the task is final (the engine must be running), with a real-time limit. */
export async function settle(s: TestServer, key: string, taskId: string, limitMs = 30_000): Promise<any> {
  let state = 'unknown';
  return eventually(
    async () => {
      const t = await info(s, key, taskId);
      state = t.state;
      return t.state === 'success' || t.state === 'fail' ? t : null;
    },
    limitMs,
    () => `task ${taskId} to be final; it is still ${state}`,
  );
}

/** Asserts the ledger invariant: every account's cached balance equals the sum of its entries. */
export async function expectLedgerInvariant(database: Database): Promise<void> {
  const { db } = database;
  const accounts = await db.selectFrom('accounts').select(['id', 'balance_micros']).execute();
  for (const a of accounts) {
    const entries = await db.selectFrom('ledger_entries').select('amount_micros').where('account_id', '=', a.id).execute();
    const sum = entries.reduce((t, e) => t + Number(e.amount_micros), 0);
    expect(Number(a.balance_micros), `account ${a.id}`).toBe(sum);
    expect(Number(a.balance_micros)).toBeGreaterThanOrEqual(0);
  }
}

/** The ledger entries of one task, by kind. */
export async function taskEntries(s: { services: { database: Database } }, taskId: string): Promise<Record<string, number>> {
  const rows = await s.services.database.db.selectFrom('ledger_entries').select(['kind', 'amount_micros']).where('task_id', '=', taskId).execute();
  return Object.fromEntries(rows.map((r) => [r.kind, Number(r.amount_micros)]));
}

/** An `accounts` row for a test that writes rows directly: active, no balance. */
export function accountRow(id: string, name = id): Insertable<AccountsTable> {
  return { id, name, status: 'active', balance_micros: 0, webhook_secret: `whsec_${id}`, created_at: 1 };
}

/**
 * A `tasks` row for a test that writes tasks directly (queries, plans, claims): a waiting local task
 * of account `acc` created at `at`, 20 minutes to its deadline, with `fields` over it.
 */
export function taskRow(id: string, at: number, fields: Partial<Insertable<TasksTable>> = {}): Insertable<TasksTable> {
  return {
    id,
    account_id: 'acc',
    model: 'google/nano-banana',
    state: 'waiting',
    param: '{}',
    input: '{}',
    media: null,
    callback_url: null,
    price_micros: 1,
    final_micros: 1,
    auto_length: 0,
    is_draft: 0,
    progress: 0,
    refunded: 0,
    files_expired: 0,
    files_expire_at: null,
    attempts: 0,
    backend: 'local',
    run_at: at,
    deadline_at: at + 1_200_000,
    locked_until: null,
    locked_by: null,
    created_at: at,
    updated_at: at,
    completed_at: null,
    fail_code: null,
    upstream_token: null,
    ...fields,
  };
}

/** Fetches a result link from the test server (links carry PUBLIC_BASE_URL, which in tests names port 0). */
export async function fetchFile(s: TestServer, link: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Response> {
  return fetch(s.url + new URL(link).pathname, { headers, method });
}

/** The SHA-256 of a result link's bytes, fetched from the test server; the link must be the server's own (PUBLIC_BASE_URL). */
export async function hashOfLink(s: TestServer, link: string): Promise<string> {
  expect(link.startsWith(s.config.PUBLIC_BASE_URL), link).toBe(true);
  const res = await fetchFile(s, link);
  expect(res.status, link).toBe(200);
  return createHash('sha256')
    .update(Buffer.from(await res.arrayBuffer()))
    .digest('hex');
}

/** The result links of a successful task, whatever the result shape. */
export function resultUrls(task: { resultJson: unknown }): string[] {
  const r = typeof task.resultJson === 'string' ? JSON.parse(task.resultJson) : task.resultJson;
  return (r as { resultUrls: string[] }).resultUrls;
}

/**
 * The one wait of the tests: polls `check` (real time) until it returns a truthy value, and returns
 * that value. A check that throws is tried again; at the limit the test fails with its last error,
 * else naming `what` was awaited. Wait with it on an observable event, never for a fixed time.
 */
export async function eventually<T>(check: () => Promise<T> | T, limitMs = 15_000, what: string | (() => string) = 'a condition'): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    let error: unknown = null;
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      error = e;
    }
    if (Date.now() > end) throw error ?? new Error(`waited ${limitMs} ms for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
