import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/billing/index.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, create, expectLedgerInvariant, fetchFile, resultUrls, settle, taskEntries } from './support.js';

const ADMIN = 'admin-token-for-kie-market-0123';
const PHOTO = 'https://img.example.com/kie/market.png';

/**
 * The kie.ai market models (catalog/kie/, decision 3310) as a kie.ai client uses them (issue 33):
 * an account set to the kie dialect creates tasks with kie.ai's model ids and input names through
 * /api/v1/jobs/createTask; without KIE_API_KEY they run on the local demo backend, succeed, and
 * are charged exactly kie.ai's list price (written out here in micro-USD, not read from the catalog).
 */
const CASES: ReadonlyArray<{ model: string; input: Record<string, unknown>; micros: number; result: 'image' | 'video' | 'audio' }> = [
  // 1500 characters at $0.03 per 1000: $0.045 (a voice name in any case is kie.ai's spelling).
  { model: 'elevenlabs/text-to-speech-turbo-2-5', input: { text: 'Hello from GenGate! '.repeat(75), voice: 'rachel' }, micros: 45_000, result: 'audio' },
  // A ratio the demo does not draw (1:4) still renders (the kind's default shape).
  { model: 'nano-banana-2-lite', input: { prompt: 'a tall lighthouse', aspect_ratio: '1:4' }, micros: 25_000, result: 'image' },
  // $0.0325 rounded up to 0.001.
  { model: 'seedream/4.5-text-to-image', input: { prompt: 'a red fox', aspect_ratio: '16:9', quality: 'high' }, micros: 33_000, result: 'image' },
  { model: 'wan/2-5-text-to-video', input: { prompt: 'waves at dusk', duration: '5', resolution: '720p' }, micros: 300_000, result: 'video' },
  { model: 'wan/2-6-text-to-video', input: { prompt: 'a paper boat', duration: '5', resolution: '720p' }, micros: 350_000, result: 'video' },
  // duration sent as a number: the choice "5".
  {
    model: 'bytedance/v1-pro-text-to-video',
    input: { prompt: 'a kite', resolution: '480p', duration: 5, camera_fixed: true },
    micros: 70_000,
    result: 'video',
  },
  // kie.ai's names that GenGate refused before (issue 33): gpt-image-2 by resolution, Seedream 5 by quality.
  { model: 'gpt-image-2-text-to-image', input: { prompt: 'a sign that says open', resolution: '1K', aspect_ratio: '16:9' }, micros: 30_000, result: 'image' },
  { model: 'gpt-image-2-image-to-image', input: { prompt: 'add a hat', input_urls: [PHOTO], resolution: '2K' }, micros: 50_000, result: 'image' },
  { model: 'seedream/5-lite-text-to-image', input: { prompt: 'a teapot', quality: 'basic', nsfw_checker: false }, micros: 15_000, result: 'image' },
  { model: 'seedream/5-pro-text-to-image', input: { prompt: 'a teapot', quality: 'basic' }, micros: 30_000, result: 'image' },
];

describe.each(dialects())('kie.ai market models on the demo backend on %s', (dialect) => {
  let s: TestServer;
  let key: string;
  let account: string;
  beforeAll(async () => {
    s = await startServer(dialect, { ...FAST, ADMIN_TOKEN: ADMIN });
    s.services.engine.start();
    const a = await s.account(20);
    key = a.key;
    account = a.id;
    const set = await s.call('POST', `/admin/v1/accounts/${account}/dialect`, { body: { dialect: 'kie' }, headers: { authorization: `Bearer ${ADMIN}` } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
  });
  afterAll(() => s?.close());

  it('without KIE_API_KEY every market model routes to the local demo backend only', () => {
    for (const { model } of CASES) expect(s.services.catalog.find(model)!.routes, model).toEqual([{ backend: 'local' }]);
  });

  it.each(CASES)(
    '$model: created through createTask with kie.ai names, succeeds, charged exactly $micros micro-USD',
    async ({ model, input, micros, result }) => {
      const id = await create(s, key, model, input, { callBackUrl: '' });
      expect(await taskEntries(s, id)).toEqual({ charge: -micros });
      const done = await settle(s, key, id, 120_000);
      expect(done, JSON.stringify(done)).toMatchObject({ state: 'success', costUsd: formatUsd(micros, 3) });
      expect(s.services.catalog.find(done.model)!.id).toBe(s.services.catalog.find(model)!.id);
      // The kie dialect: resultJson is the JSON string kie.ai clients parse.
      expect(typeof done.resultJson).toBe('string');
      const links = resultUrls(done);
      expect(links.length).toBeGreaterThan(0);
      const file = await fetchFile(s, links[0]!);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toMatch(new RegExp(`^${result}/`));
      expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(100);
      expect(JSON.parse(done.param)).toEqual({ model, input, callBackUrl: '' });
    },
  );

  it('refusals name the field as sent and the values kie.ai documents, and charge nothing', async () => {
    const a = await s.account(1);
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['wan/2-6-text-to-video', { prompt: 'x', duration: '7' }, /^input\.duration must be one of "5", "10", "15" for wan\/2-6-text-to-video \(got "7"\)$/],
      [
        'elevenlabs/text-to-speech-turbo-2-5',
        { text: 'x', voice: 'Nobody' },
        /^input\.voice must be one of "Rachel", .* for elevenlabs\/text-to-speech-turbo-2-5 \(got "Nobody"\)$/,
      ],
      [
        'gpt-image-2-text-to-image',
        { prompt: 'x', resolution: '3K' },
        /^input\.resolution must be one of "1K", "2K", "4K" for gpt-image-2-text-to-image \(got "3K"\)$/,
      ],
      [
        'seedream/4.5-text-to-image',
        { prompt: 'x', quality: 'ultra' },
        /^input\.quality must be one of "basic", "high" for seedream\/4\.5-text-to-image \(got "ultra"\)$/,
      ],
    ];
    for (const [model, input, msg] of cases) {
      const r = await s.call('POST', '/api/v1/jobs/createTask', { key: a.key, body: { model, input } });
      expect(r.status, model).toBe(400);
      expect(r.body.msg).toMatch(msg);
    }
    expect((await s.call('GET', '/api/v1/user/balance', { key: a.key })).body.data.balance).toBe('1.0000');
    await expectLedgerInvariant(s.services.database);
  });
});
