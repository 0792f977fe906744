import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/services.js';
import { createTestDb, type TestDb } from '../helpers/db.js';
import { needs } from '../helpers/tools.js';
import { findProblems } from './checks.js';
import { CHAOS_SECRET_KEY, formatReport, runChaos } from './run-chaos.js';

const enabled = [needs('postgres'), needs('redis')].every(Boolean);

/** The short form of `npm run chaos` (issue 17): a few hundred tasks and a few kills of API and worker processes. */
describe.skipIf(!enabled)('chaos, short form', () => {
  let db: TestDb;
  beforeAll(async () => {
    db = await createTestDb('postgres');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('loses no task, charges and refunds once, keeps balances equal to the ledger, delivers every callback under one id', async () => {
    const report = await runChaos({
      databaseUrl: db.url,
      redisUrl: process.env.TEST_REDIS_URL!,
      tasks: 300,
      apis: 2,
      workers: 3,
      kills: 4,
      seed: 17,
      drainMs: 90_000,
      log: () => {},
    });
    const text = formatReport(report);
    expect(report.accepted, text).toBeGreaterThan(200);
    expect(report.killed.api + report.killed.worker, text).toBe(4);
    expect(report.findings, text).toEqual({ lostTasks: [], doubleCharges: [], wrongRefunds: [], balanceNotLedger: [], undelivered: [], callbackIds: [] });
  }, 240_000);

  it('the checks find a lost task, two tasks for one key, a refunded success, a balance off its ledger and a task under two webhook-ids', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gengate-chaos-check-'));
    const services = await buildServices(
      loadConfig({ DATABASE_URL: db.url, DATA_DIR: dir, FIRST_RUN_ACCOUNT: 'false', LOG_LEVEL: 'silent', GENGATE_SECRET_KEY: CHAOS_SECRET_KEY }),
    );
    try {
      const q = services.database.db;
      // A success refunded (the ledger's unique (task, kind) index already makes a second charge impossible).
      const success = await q
        .selectFrom('ledger_entries')
        .innerJoin('tasks', 'tasks.id', 'ledger_entries.task_id')
        .select(['ledger_entries.task_id', 'ledger_entries.account_id', 'ledger_entries.amount_micros'])
        .where('tasks.state', '=', 'success')
        .where('ledger_entries.kind', '=', 'charge')
        .orderBy('tasks.id')
        .limit(2)
        .execute();
      const [one, two] = success.map((e) => e.task_id!);
      await services.database.tx((w) =>
        w
          .insertInto('ledger_entries')
          .values({
            account_id: success[0]!.account_id,
            kind: 'refund',
            amount_micros: -Number(success[0]!.amount_micros),
            balance_after_micros: 0,
            task_id: one!,
            reason: 'test',
            created_at: Date.now(),
          })
          .execute(),
      );
      // The client was given two tasks for one Idempotency-Key, and one that was never made.
      const given = new Map([
        [one!, 'k1'],
        [two!, 'k1'],
        ['task_never_made', 'k2'],
      ]);
      const found = await findProblems(q, given, [
        { taskId: one!, webhookId: 'a' },
        { taskId: one!, webhookId: 'b' },
      ]);
      expect(found.lostTasks).toEqual(['task_never_made']);
      expect(found.doubleCharges).toEqual([`Idempotency-Key k1: tasks ${one}, ${two}`]);
      expect(found.wrongRefunds).toEqual([`${one} (success): 1 refunds`]);
      expect(found.balanceNotLedger).toHaveLength(1);
      expect(found.callbackIds).toEqual([`${one}: webhook-ids a, b`]);
    } finally {
      await services.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
