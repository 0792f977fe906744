import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateInput } from '../../src/catalog/index.js';
import { formatUsd } from '../../src/billing/index.js';
import { quote } from '../../src/pricing/index.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { KIE_CASES } from '../catalog/kie-cases.js';
import { FAST, create, expectLedgerInvariant, info, settle, taskEntries } from './support.js';

/**
 * kie.ai clients pointed at GenGate (DECISIONS §18): a kie.ai-shaped createTask body under each
 * kie.ai id of KIE.md §1 is accepted, charged what the GenGate body it maps to costs, and the
 * task succeeds on the local backend; refusals are 400s naming the field as sent, charging nothing.
 */
describe.each(dialects())('kie.ai model ids end to end on %s', (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(dialect, FAST);
    s.services.engine.start();
  });
  afterAll(() => s.close());

  const post = (key: string, body: unknown) => s.call('POST', '/api/v1/jobs/createTask', { key, body });
  const balance = async (key: string) => (await s.call('GET', '/api/v1/user/balance', { key })).body.data.balance as string;
  /** What the GenGate body costs, by the same catalog and quote the server uses. */
  const gengatePrice = (model: string, input: Record<string, unknown>) => {
    const v = validateInput(s.services.catalog, model, input, undefined, { uploadBaseUrl: s.config.PUBLIC_BASE_URL });
    return quote(s.services.catalog, model, v.input).priceMicros;
  };

  it.each(KIE_CASES)(
    '$kie: accepted with callBackUrl "", priced like $model, succeeds; the task reports $model and keeps the body',
    async ({ kie, model, sent, gengate }) => {
      const a = await s.account(20);
      // One kie.ai client library sends callBackUrl: "" on every request; it means no callback.
      const body = { model: kie, input: sent, callBackUrl: '' };
      const r = await post(a.key, body);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const id = r.body.data.taskId as string;
      const price = gengatePrice(model, gengate);
      expect(await taskEntries(s, id)).toEqual({ charge: -price });
      const done = await settle(s, a.key, id);
      expect(done).toMatchObject({ state: 'success', model, costUsd: formatUsd(price, 3) });
      // The client's body as sent: its `model` is the kie.ai id the task was created under.
      expect(JSON.parse(done.param)).toEqual(body);
      const callbacks = await s.services.database.db.selectFrom('callbacks').select('task_id').where('task_id', '=', id).execute();
      expect(callbacks).toEqual([]);
    },
  );

  it('refused kie.ai fields answer 400 naming the field as sent, and charge nothing', async () => {
    const a = await s.account(1);
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      [
        'gpt-image-2-text-to-image',
        { prompt: 'x', resolution: '8K' },
        /^input\.resolution must be one of "1K", "2K", "4K" for gpt-image-2-text-to-image \(got "8K"\)$/,
      ],
      ['seedream/5-lite-text-to-image', { prompt: 'x', quality: 'high' }, /^input\.quality must be one of "1K", "2K" for seedream-flash \(got "high"\)$/],
      [
        'bytedance/seedance-2-5',
        { prompt: 'x', resolution: '4k' },
        /^input\.resolution must be one of "480p", "720p", "1080p" for seedance-2\.5 \(got "4k"\)$/,
      ],
      ['google/nano-banana-edit', { prompt: 'x', image_urls: ['ftp://img.example.com/a.png'] }, /^input\.image_urls\[0\] must be /],
      ['grok-imagine/image-to-video', { prompt: 'x', mode: 'wild' }, /^input\.mode must be one of "fun", "normal", "spicy"/],
    ];
    for (const [model, input, msg] of cases) {
      const r = await post(a.key, { model, input, callBackUrl: '' });
      expect(r.status, model).toBe(400);
      expect(r.body).toMatchObject({ code: 400, error: 'invalid_request_error', msg: expect.stringMatching(msg) });
    }
    expect(await balance(a.key)).toBe('1.0000');
    expect(await s.services.database.db.selectFrom('tasks').select('id').where('account_id', '=', a.id).execute()).toEqual([]);
  });

  it('under GenGate ids nothing changes: kie.ai names are unknown fields, and a GenGate body is stored as sent', async () => {
    const a = await s.account(5);
    const r = await post(a.key, { model: 'grok-imagine', input: { prompt: 'x', mode: 'fun' } });
    expect(r.status).toBe(400);
    expect(r.body.msg).toMatch(/^input\.mode is not an input field of grok-imagine; its fields are: /);
    const body = { model: 'wan-2.7', input: { prompt: 'x', resolution: '480p' } };
    const id = await create(s, a.key, body.model, body.input);
    const t = await info(s, a.key, id);
    expect(t.model).toBe('wan-2.7');
    expect(JSON.parse(t.param)).toEqual(body);
    await expectLedgerInvariant(s.services.database);
  });

  it('callBackUrl "" is no callback under any model id; a real one still gets its callback row', async () => {
    const a = await s.account(5);
    const none = await create(s, a.key, 'suno-v6', { prompt: 'la la' }, { callBackUrl: '' });
    const some = await create(s, a.key, 'suno-v6', { prompt: 'la la' }, { callBackUrl: 'https://hooks.example.com/gg' });
    const rows = await s.services.database.db.selectFrom('callbacks').select('task_id').where('task_id', 'in', [none, some]).execute();
    expect(rows.map((r) => r.task_id)).toEqual([some]);
    const t = await s.services.database.db.selectFrom('tasks').select('callback_url').where('id', '=', none).executeTakeFirstOrThrow();
    expect(t.callback_url).toBeNull();
  });
});
