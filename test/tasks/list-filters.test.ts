import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { MovableClock, UNLIMITED, create } from './support.js';

/** jobs/list filters the console uses: model and creation time (since inclusive, until exclusive), with paging. */
describe.each(dialects())('jobs/list model and time filters on %s', (dialect) => {
  let s: TestServer;
  const clock = new MovableClock();
  beforeAll(async () => {
    s = await startServer(dialect, { ...UNLIMITED, RUN_ENGINE: 'false' }, undefined, { clock });
  });
  afterAll(() => s.close());

  it('filters by model, by since/until and pages within the filter', async () => {
    const a = await s.account(50);
    const t0 = clock.now();
    const early = await create(s, a.key, 'google/nano-banana', { prompt: 'one' });
    clock.advance(60_000);
    const t1 = clock.now();
    const video = await create(s, a.key, 'seedance-2.0-fast', { prompt: 'two' });
    const late = [await create(s, a.key, 'google/nano-banana', { prompt: 'three' }), await create(s, a.key, 'google/nano-banana', { prompt: 'four' })];
    const ids = async (q: string) => {
      const r = await s.call('GET', `/api/v1/jobs/list?${q}`, { key: a.key });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return { ids: r.body.data.items.map((t: any) => t.taskId), next: r.body.data.nextBefore };
    };
    expect((await ids('model=seedance-2.0-fast')).ids).toEqual([video]);
    expect((await ids('model=google/nano-banana')).ids).toEqual([late[1], late[0], early]);
    expect((await ids(`since=${t1}`)).ids).toEqual([late[1], late[0], video]);
    expect((await ids(`until=${t1}`)).ids).toEqual([early]);
    expect((await ids(`since=${t0}&until=${t1}&model=seedance-2.0-fast`)).ids).toEqual([]);
    const first = await ids(`model=google/nano-banana&since=${t1}&limit=1`);
    expect(first.ids).toEqual([late[1]]);
    const second = await ids(`model=google/nano-banana&since=${t1}&limit=1&before=${first.next}`);
    expect(second).toEqual({ ids: [late[0]], next: null });
  });

  it('refuses a bad time with a 400 naming the parameter', async () => {
    const a = await s.account(1);
    const r = await s.call('GET', '/api/v1/jobs/list?since=yesterday', { key: a.key });
    expect(r.status).toBe(400);
    expect(r.body.msg).toMatch(/since/);
  });
});
