import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';
import { noticeToken, postNotice, serverWithUpstream, type FakeUpstream } from '../tasks/fake-upstream.js';
import { create, eventually, info, settle } from '../tasks/support.js';

/**
 * Decision 2102: with UPSTREAM_WEBHOOKS, a route whose upstream posts a notice when a job ends
 * (same-api here) is polled once at UPSTREAM_POLL_MS after the hand-off, then only every
 * UPSTREAM_FALLBACK_POLL_MS: the notice finishes the task, the rare polls catch a notice that never came.
 */
describe.each(dialects())('safety-net polls of routes that send notices on %s', (dialect) => {
  const servers: Array<{ s: TestServer; fake: FakeUpstream }> = [];
  const start = async (fallbackMs: number) => {
    const started = await serverWithUpstream(dialect, {
      UPSTREAM_WEBHOOKS: 'true',
      PUBLIC_BASE_URL: 'https://gengate.example.com',
      UPSTREAM_POLL_MS: '50',
      UPSTREAM_FALLBACK_POLL_MS: String(fallbackMs),
    });
    servers.push(started);
    return started;
  };
  afterAll(async () => {
    for (const { s, fake } of servers) {
      await s.close();
      await fake.close();
    }
  });

  it('polls once soon after the hand-off, then not until the fallback interval; a notice finishes the task', async () => {
    // The fallback poll is 10 minutes away: within this test only the first poll and the notice can happen, however slow the machine.
    const { s, fake } = await start(600_000);
    fake.state.taskState = 'generating';
    const a = await s.account(1);
    const polls0 = fake.state.recordInfos;
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a patient owl' });
    // The first poll (50 ms after the hand-off) sees the generation start.
    await eventually(async () => (await info(s, a.key, id)).state === 'generating');
    // Without the fallback interval the route would be polled every 50 ms: a second poll within this second, even on a busy machine.
    await sleep(1_000);
    expect(fake.state.recordInfos - polls0).toBe(1);
    const token = noticeToken(fake, id);
    fake.state.taskState = 'success';
    const before = fake.state.recordInfos;
    expect((await postNotice(s, token)).status).toBe(200);
    // Only the notice can finish it before the fallback poll in 10 minutes.
    expect((await settle(s, a.key, id)).state).toBe('success');
    // One status read: the results come from the record the poll found finished (DoneRecords).
    expect(fake.state.recordInfos - before).toBe(1);
  });

  it('a notice that never comes is made up for by the fallback poll', async () => {
    const { s, fake } = await start(1_500);
    fake.state.taskState = 'generating';
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a forgotten owl' });
    await eventually(async () => (await info(s, a.key, id)).state === 'generating');
    fake.state.taskState = 'success';
    // No notice: the next fallback poll (1.5 s away) finds the result.
    expect((await settle(s, a.key, id)).state).toBe('success');
  });
});
