import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';
import { noticeToken, postNotice, serverWithUpstream, type FakeUpstream } from './fake-upstream.js';
import { create, eventually, info, settle } from './support.js';

/**
 * Decision 2102: with UPSTREAM_WEBHOOKS, a route whose upstream posts a notice when a job ends
 * (same-api here) is polled once at UPSTREAM_POLL_MS after the hand-off, then only every
 * UPSTREAM_FALLBACK_POLL_MS: the notice finishes the task, the rare polls catch a notice that never came.
 */
describe.each(dialects())('safety-net polls of routes that send notices on %s', (dialect) => {
  let s: TestServer;
  let fake: FakeUpstream;
  beforeAll(async () => {
    ({ s, fake } = await serverWithUpstream(dialect, {
      UPSTREAM_WEBHOOKS: 'true',
      PUBLIC_BASE_URL: 'https://gengate.example.com',
      UPSTREAM_POLL_MS: '50',
      UPSTREAM_FALLBACK_POLL_MS: '1500',
    }));
  });
  afterAll(async () => {
    await s.close();
    await fake.close();
  });

  it('polls once soon after the hand-off, then at the fallback interval; a notice finishes the task at once', async () => {
    fake.state.taskState = 'generating';
    const a = await s.account(1);
    const polls0 = fake.state.recordInfos;
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a patient owl' });
    // The first poll (50 ms after the hand-off) sees the generation start.
    await eventually(async () => (await info(s, a.key, id)).state === 'generating', 5_000);
    await sleep(1_000);
    // Without the fallback interval this second would have taken about 20 polls.
    expect(fake.state.recordInfos - polls0).toBe(1);
    const token = noticeToken(fake, id);
    fake.state.taskState = 'success';
    const noticed = Date.now();
    const before = fake.state.recordInfos;
    expect((await postNotice(s, token)).status).toBe(200);
    expect((await settle(s, a.key, id, 5_000)).state).toBe('success');
    expect(Date.now() - noticed).toBeLessThan(1_000);
    // One status read: the results come from the record the poll found finished (DoneRecords).
    expect(fake.state.recordInfos - before).toBe(1);
  });

  it('a notice that never comes is made up for by the fallback poll', async () => {
    fake.state.taskState = 'generating';
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a forgotten owl' });
    await eventually(async () => (await info(s, a.key, id)).state === 'generating', 5_000);
    fake.state.taskState = 'success';
    // No notice: the next fallback poll (at most 1.5 s away) finds the result.
    expect((await settle(s, a.key, id, 6_000)).state).toBe('success');
  });
});
