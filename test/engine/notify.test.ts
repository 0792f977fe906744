import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { dialects } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';
import { noticeToken, postNotice, serverWithUpstream, type FakeUpstream } from '../tasks/fake-upstream.js';
import { create, eventually, info, settle } from '../tasks/support.js';

/** The upstream callback address (issue 8): wakes its task, unguessable, size-limited, says nothing, never logged. */
describe.each(dialects())('upstream notify address on %s', (dialect) => {
  let s: TestServer;
  let fake: FakeUpstream;
  beforeAll(async () => {
    ({ s, fake } = await serverWithUpstream(dialect, {
      UPSTREAM_WEBHOOKS: 'true',
      UPSTREAM_POLL_MS: '600000',
      PUBLIC_BASE_URL: 'https://gengate.example.com',
    }));
    fake.state.taskState = 'generating';
  });
  afterAll(async () => {
    await s.close();
    await fake.close();
  });
  const notify = (token: string, body?: string, type?: string) => postNotice(s, token, body, type);

  it('gives the upstream a per-task address; a notice there finishes the task without waiting for the next poll', async () => {
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'an owl' });
    // Handed off; the next poll is 10 minutes away.
    await eventually(async () => (await info(s, a.key, id)).state === 'queuing');
    const sent = fake.creates.find((c) => c.key === `gengate-${id}`)!;
    const m = /^https:\/\/gengate\.example\.com\/upstream\/v1\/notify\/([A-Za-z0-9_-]{32})$/.exec(sent.body.callBackUrl);
    expect(m).not.toBeNull();
    const token = m![1]!;
    const polls = fake.state.recordInfos;
    fake.state.taskState = 'success';
    // A notice wakes its task by making it due (run_at) before it is answered: an untouched run_at after the answers shows nothing was woken.
    const runAt = async () => Number((await s.services.database.db.selectFrom('tasks').select('run_at').where('id', '=', id).executeTakeFirstOrThrow()).run_at);
    const due = await runAt();

    // Unknown and malformed tokens: 404, and nothing is woken.
    for (const bad of [token.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')), 'short', `${token}x`.repeat(3)]) {
      const r = await notify(bad);
      expect(r.status).toBe(404);
      expect(await r.text()).not.toContain(id);
    }
    expect((await fetch(`${s.url}/upstream/v1/notify/${token}`)).status).toBe(404);
    const big = await notify(token, 'x'.repeat(300 * 1024), 'text/plain');
    expect(big.status).toBe(413);
    expect(await runAt()).toBe(due);
    expect(fake.state.recordInfos).toBe(polls);
    expect((await info(s, a.key, id)).state).toBe('queuing');

    // Any body type; the answer carries nothing about the task.
    const ok = await notify(token, 'status=COMPLETED', 'application/x-www-form-urlencoded');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ code: 200, msg: 'success', data: null });
    expect((await settle(s, a.key, id, 10_000)).state).toBe('success');
    // A repeated notice for a finished task changes nothing.
    expect((await notify(token)).status).toBe(200);
    expect((await info(s, a.key, id)).state).toBe('success');
  });

  it('a notice that arrives while a step is asking the upstream is not lost', async () => {
    fake.state.taskState = 'generating';
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a crane' });
    await eventually(async () => (await info(s, a.key, id)).state === 'queuing');
    const token = noticeToken(fake, id);
    let answer = () => {};
    fake.state.hold = new Promise<void>((resolve) => (answer = resolve));
    const polls = fake.state.recordInfos;
    expect((await notify(token)).status).toBe(200); // the upstream reports progress: a step starts and waits on recordInfo
    await eventually(async () => fake.state.recordInfos > polls);
    fake.state.taskState = 'success';
    expect((await notify(token)).status).toBe(200); // done, while that step is still waiting for its answer
    fake.state.hold = null;
    answer(); // the step hears "generating"; only the notice it must keep brings the task to success before the next poll
    expect((await settle(s, a.key, id, 8_000)).state).toBe('success');
  });

  it('a notice that arrives before the hand-off is recorded has the task polled at once, not after the first interval', async () => {
    fake.state.taskState = 'generating';
    let accept = () => {};
    fake.state.createHold = new Promise<void>((resolve) => (accept = resolve));
    const a = await s.account(1);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a heron' });
    await eventually(async () => fake.creates.some((c) => c.key === `gengate-${id}`));
    const token = noticeToken(fake, id);
    fake.state.taskState = 'success';
    // The upstream finished before its answer to the submit reached GenGate (a fast job, a slow network).
    expect((await notify(token)).status).toBe(200);
    fake.state.createHold = null;
    accept();
    // The first poll is 10 minutes away and the watch lease's renewal 15 s or more: only the remembered notice finishes it this soon.
    expect((await settle(s, a.key, id, 8_000)).state).toBe('success');
  });

  it('never writes the token to the request log', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const app = buildApp({ ...s.services, config: { ...s.config, LOG_LEVEL: 'info' } }, { logStream: stream });
    await app.ready();
    const token = 'Z'.repeat(32);
    const r = await app.inject({ method: 'POST', url: `/upstream/v1/notify/${token}`, payload: '{}', headers: { 'content-type': 'application/json' } });
    expect(r.statusCode).toBe(404);
    await app.close();
    await eventually(async () => lines.some((l) => l.includes('/upstream/v1/notify/[redacted]')), 5_000);
    expect(lines.join('')).not.toContain(token);
  });
});
