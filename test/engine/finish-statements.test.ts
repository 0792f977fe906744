import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { startReceiver } from '../callbacks/receiver.js';
import { dialects } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';
import { noticeToken, postNotice, serverWithUpstream, type FakeUpstream } from '../tasks/fake-upstream.js';
import { create, eventually, info } from '../tasks/support.js';

/** One statement this test process sent to PostgreSQL: its text, its connection, and the rows it returned or changed once answered. */
interface Sent {
  text: string;
  client: unknown;
  rows: number | null;
}

// Every statement sent while recording (the client is wrapped once, for this file only: vitest runs
// each test file in its own worker). The test's own reads carry a marker and are left out.
const sent: Sent[] = [];
let recording = false;
const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
pg.Client.prototype.query = function (this: unknown, ...a: unknown[]) {
  const q = a[0] as string | { text: string };
  const text = typeof q === 'string' ? q : q.text;
  if (!recording || text.includes('/* probe */')) return query.apply(this, a);
  const entry: Sent = { text, client: this, rows: null };
  sent.push(entry);
  const answered = (res: { rowCount?: number | null } | undefined) => (entry.rows = res?.rowCount ?? 0);
  const last = a[a.length - 1];
  if (typeof last === 'function') {
    a[a.length - 1] = (err: unknown, res: { rowCount?: number | null }) => (answered(res), last(err, res));
    return query.apply(this, a);
  }
  const out = query.apply(this, a) as Promise<{ rowCount?: number | null }>;
  out?.then?.(answered, () => answered(undefined));
  return out;
} as typeof pg.Client.prototype.query;

/** A statement as `verb table`; a data-modifying CTE as its writes joined by ` + `. */
function shape(text: string): string {
  const t = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const ctl = /^(begin|commit|rollback)\b/.exec(t);
  if (ctl) return ctl[1]!;
  if (t.startsWith('with ')) return [...t.matchAll(/ as \((update|insert into) "?(\w+)/g)].map((m) => `${m[1]} ${m[2]}`).join(' + ');
  const m = /^(insert into|update|delete from) "?(\w+)/.exec(t) ?? /^(select) .*? from "?(\w+)/.exec(t);
  return m ? `${m[1]} ${m[2]}` : t.slice(0, 40);
}

/**
 * The statements of the finished task's path, in order: transactions (begin to commit on one
 * connection) and single statements, without the work loops' claims that found nothing (woken by
 * the same signals, they look for other work) and without the wake-up signals (`pg_notify`).
 */
function pathOf(all: Sent[]): string[] {
  const units: Sent[][] = [];
  const open = new Map<unknown, Sent[]>();
  for (const e of all) {
    const s = shape(e.text);
    const unit = open.get(e.client);
    if (unit) {
      unit.push(e);
      if (s === 'commit' || s === 'rollback') open.delete(e.client);
      continue;
    }
    units.push([e]);
    if (s === 'begin') open.set(e.client, units[units.length - 1]!);
  }
  const emptyClaim = (u: Sent[]) => u.some((e) => /skip locked/i.test(e.text) && e.rows === 0);
  return units
    .filter((u) => !emptyClaim(u))
    .flat()
    .map((e) => shape(e.text))
    .filter((s) => !s.includes('pg_notify'));
}

/**
 * Issue 21: the round trips to PostgreSQL of one finished upstream task, from the upstream's
 * completion notice to the recorded outcome of the client's callback, for a task the worker holds
 * in memory (decision 2102 says what each costs). A new statement on this path fails here.
 * PostgreSQL only: without TEST_DATABASE_URL it skips with the notice of test/helpers/tools.ts.
 */
describe.skipIf(!dialects().includes('postgres'))('the statements of one finished task on postgres', () => {
  let s: TestServer;
  let fake: FakeUpstream;
  let hook: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    hook = await startReceiver(() => 200);
    // No poll of the upstream and no reload of the model switches for 10 minutes, a look for due work
    // once a minute (the most the setting allows): only the notice moves the task while the test watches.
    ({ s, fake } = await serverWithUpstream('postgres', {
      UPSTREAM_WEBHOOKS: 'true',
      UPSTREAM_POLL_MS: '600000',
      ENGINE_POLL_MS: '60000',
      MODEL_SWITCH_CACHE_MS: '600000',
    }));
    s.services.callbacks.start();
  });
  afterAll(async () => {
    await s?.close();
    await fake?.close();
    await hook?.close();
  });

  it('a notice (one), the finish with its files and callback row (one), the callback claim (two) and its outcome with the log line (one)', async () => {
    fake.state.taskState = 'generating';
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'an owl' }, { callBackUrl: `${hook.url}/done` });
    await eventually(async () => (await info(s, a.key, id)).state === 'queuing' && s.services.engine.held === 1);
    const token = noticeToken(fake, id);
    fake.state.taskState = 'success';
    sent.length = 0;
    recording = true;
    const r = await postNotice(s, token);
    expect(r.status).toBe(200);
    await eventually(async () => {
      const { rows } = await sql<{ status: string }>`select status from callbacks where task_id = ${id} /* probe */`.execute(s.services.database.db);
      return rows[0]?.status === 'delivered';
    });
    recording = false;
    await eventually(() => sent.every((e) => e.rows !== null));
    expect(hook.at('/done')).toHaveLength(1);
    expect(pathOf(sent)).toEqual([
      'update tasks',
      'update tasks + insert into task_events + insert into files + update callbacks',
      'update callbacks',
      'select tasks',
      'update callbacks + insert into webhook_attempts',
    ]);
    // The task finished with its file, its event and one delivery logged.
    const db = s.services.database.db;
    expect((await db.selectFrom('task_events').select('to_state').where('task_id', '=', id).execute()).map((e) => e.to_state)).toContain('success');
    expect(await db.selectFrom('files').select('id').where('task_id', '=', id).where('purpose', '=', 'result').execute()).toHaveLength(1);
    expect(await db.selectFrom('webhook_attempts').select('ok').where('task_id', '=', id).execute()).toEqual([{ ok: 1 }]);
  });
});
