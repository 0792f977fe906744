import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { ReplySchemas } from '../../src/api/index.js';
import { validateInput } from '../../src/catalog/index.js';
import { legacySignature } from '../../src/callbacks/index.js';
import { quote } from '../../src/pricing/index.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startReceiver } from '../callbacks/receiver.js';
import { FAST, eventually, expectLedgerInvariant, fetchFile, info, settle, taskEntries } from './support.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * kie.ai's Suno pair (KIE.md §3, DECISIONS §18, decision 0404): POST /api/v1/generate makes an
 * ordinary suno-v6 task, priced, charged and refunded like the same body through createTask;
 * GET /api/v1/generate/record-info and the callbacks answer in kie.ai's Suno shapes.
 */
describe.each(dialects())('kie.ai Suno endpoints on %s', (dialect) => {
  let s: TestServer;
  let r: Receiver;
  beforeAll(async () => {
    r = await startReceiver(() => 200);
    // Tasks wait 300 ms in the local queue, so PENDING can be seen before SUCCESS.
    s = await startServer(dialect, { ...FAST, LOCAL_QUEUE_MS: '300', ALLOW_PRIVATE_NETWORK: 'true' });
    s.services.engine.start();
    s.services.callbacks.start();
  });
  afterAll(async () => {
    await s.close();
    await r.close();
  });

  const generate = (key: string, body: unknown, headers: Record<string, string> = {}) => s.call('POST', '/api/v1/generate', { key, body, headers });
  const record = async (key: string, taskId: string) => {
    const res = await s.call('GET', `/api/v1/generate/record-info?taskId=${encodeURIComponent(taskId)}`, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ code: 200, msg: 'success' });
    return ReplySchemas.SunoRecord.parse(res.body.data);
  };
  const created = async (key: string, body: unknown) => {
    const res = await generate(key, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ code: 200, msg: 'success', data: { taskId: expect.stringMatching(/^tk_/) } });
    return res.body.data.taskId as string;
  };
  const price = (input: Record<string, unknown>) => {
    const v = validateInput(s.services.catalog, 'suno-v6', input);
    return quote(s.services.catalog, 'suno-v6', v.input).priceMicros;
  };
  const stored = async (id: string) => {
    const row = await s.services.database.db.selectFrom('tasks').select(['input', 'origin', 'model']).where('id', '=', id).executeTakeFirstOrThrow();
    return { ...row, input: JSON.parse(row.input) as Record<string, unknown> };
  };
  const untilFinal = async (key: string, id: string) =>
    (await eventually(async () => {
      const d = await record(key, id);
      return d.status === 'PENDING' ? null : d;
    }, 30_000))!;
  const delivered = async (path: string) => (await eventually(() => (r.at(path).length > 0 ? r.at(path) : null), 30_000, `a callback at ${path}`))!;

  it('a custom-mode body: PENDING, then SUCCESS with two tracks; priced like the suno-v6 body; visible through jobs/recordInfo and list', async () => {
    const a = await s.account(5);
    const body = {
      prompt: '[Verse] Night city lights',
      customMode: true,
      instrumental: false,
      model: 'V4_5',
      style: 'synthwave',
      title: 'Neon',
      negativeTags: 'heavy metal',
      vocalGender: 'f',
      styleWeight: 0.65,
      weirdnessConstraint: 0.5,
      audioWeight: 0.65,
      callBackUrl: '',
    };
    const id = await created(a.key, body);
    const same = {
      prompt: body.prompt,
      custom_mode: true,
      instrumental: false,
      version: 'v4.5',
      style: 'synthwave',
      title: 'Neon',
      negative_tags: 'heavy metal',
      vocal_gender: 'female',
      style_weight: 0.65,
      weirdness_constraint: 0.5,
      audio_weight: 0.65,
    };
    expect(await taskEntries(s, id)).toEqual({ charge: -price(same) });
    // The same suno-v6 body through createTask: the same input, the same charge.
    const jobs = await s.call('POST', '/api/v1/jobs/createTask', { key: a.key, body: { model: 'suno-v6', input: same } });
    expect(jobs.status, JSON.stringify(jobs.body)).toBe(200);
    expect(await taskEntries(s, jobs.body.data.taskId)).toEqual(await taskEntries(s, id));
    expect((await stored(jobs.body.data.taskId)).input).toEqual((await stored(id)).input);
    expect((await stored(jobs.body.data.taskId)).origin).toBeNull();
    const row = await stored(id);
    expect(row).toMatchObject({ model: 'suno-v6', origin: 'suno' });
    expect(row.input).toMatchObject(same);

    const first = await record(a.key, id);
    expect(first).toMatchObject({ taskId: id, status: 'PENDING', type: 'GENERATE', errorCode: null, response: { taskId: id, sunoData: [] } });
    expect(JSON.parse(first.param)).toEqual(body);

    const done = await untilFinal(a.key, id);
    expect(done.status).toBe('SUCCESS');
    expect(done.response.sunoData).toHaveLength(2);
    for (const track of done.response.sunoData) {
      expect(track).toMatchObject({ prompt: body.prompt, title: 'Neon', tags: 'synthwave', modelName: 'v4.5', imageUrl: null });
      expect(track.streamAudioUrl).toBe(track.audioUrl);
      const file = await fetchFile(s, track.audioUrl);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toMatch(/audio\/mpeg/);
    }
    expect(new Set(done.response.sunoData.map((t) => t.audioUrl)).size).toBe(2);

    // The same task through the jobs API: an ordinary suno-v6 task with the Suno body as param.
    const t = await info(s, a.key, id);
    expect(t).toMatchObject({ taskId: id, model: 'suno-v6', state: 'success', refunded: false });
    expect(JSON.parse(t.param)).toEqual(body);
    const list = await s.call('GET', '/api/v1/jobs/list', { key: a.key });
    expect(list.body.data.items.map((x: { taskId: string }) => x.taskId)).toContain(id);
    expect(await taskEntries(s, id)).toEqual({ charge: -price(same) });
  });

  it('without customMode, model is checked and the default version runs (suno-v6 uses version only with custom mode)', async () => {
    const a = await s.account(5);
    const id = await created(a.key, { prompt: 'a calm piano song', customMode: false, instrumental: true, model: 'V5', style: '', title: '' });
    expect((await stored(id)).input).toMatchObject({ custom_mode: false, instrumental: true, version: 'v6', prompt: 'a calm piano song' });
    expect(await taskEntries(s, id)).toEqual({ charge: -price({ prompt: 'a calm piano song', instrumental: true }) });
    const done = await untilFinal(a.key, id);
    expect(done.status).toBe('SUCCESS');
    expect(done.response.sunoData.map((t) => t.modelName)).toEqual(['v6', 'v6']);
  });

  it.each([
    ['501', 'GENERATE_AUDIO_FAILED', 501],
    ['nsfw', 'SENSITIVE_WORD_ERROR', 400],
    ['422', 'CREATE_TASK_FAILED', 422],
  ])('a task failing with gengate:fail=%s is %s, refunded exactly once', async (fault, status, code) => {
    const a = await s.account(1);
    const id = await created(a.key, { prompt: `a song gengate:fail=${fault}`, customMode: false, instrumental: false, model: 'V5' });
    const done = await untilFinal(a.key, id);
    expect(done).toMatchObject({ status, errorCode: code, response: { sunoData: [] } });
    expect(done.errorMessage).toEqual(expect.any(String));
    const t = await settle(s, a.key, id);
    expect(t).toMatchObject({ state: 'fail', failCode: code, refunded: true, failMsg: done.errorMessage });
    const entries = await s.services.database.db.selectFrom('ledger_entries').select(['kind', 'amount_micros']).where('task_id', '=', id).execute();
    expect(entries.map((e) => [e.kind, Number(e.amount_micros)]).sort()).toEqual([
      ['charge', -price({ prompt: 'x' })],
      ['refund', price({ prompt: 'x' })],
    ]);
    expect((await s.call('GET', '/api/v1/user/balance', { key: a.key })).body.data.balance).toBe('1.0000');
    await expectLedgerInvariant(s.services.database);
  });

  it("callbacks come in kie.ai's Suno shape, signed like every GenGate callback", async () => {
    const a = await s.account(5);
    const secret = await s.services.accounts.webhookSecret(a.id);
    const ok = await created(a.key, { prompt: 'a song', customMode: false, instrumental: false, model: 'V5', callBackUrl: `${r.url}/suno-ok` });
    const bad = await created(a.key, {
      prompt: 'a song gengate:fail=501',
      customMode: false,
      instrumental: false,
      model: 'V5',
      callBackUrl: `${r.url}/suno-bad`,
    });
    const [got] = await delivered('/suno-ok');
    const body = JSON.parse(got!.body);
    const done = await record(a.key, ok);
    expect(body).toEqual({
      code: 200,
      msg: 'All generated successfully.',
      data: {
        callbackType: 'complete',
        task_id: ok,
        data: done.response.sunoData.map((t) => ({
          id: t.id,
          audio_url: t.audioUrl,
          source_audio_url: t.audioUrl,
          stream_audio_url: t.audioUrl,
          source_stream_audio_url: t.audioUrl,
          image_url: null,
          source_image_url: null,
          prompt: 'a song',
          model_name: 'v6',
          title: '',
          tags: '',
          createTime: t.createTime,
          duration: null,
        })),
      },
    });
    expect(body.data.data).toHaveLength(2);
    // Both GenGate signatures: Standard Webhooks over the body, and the older HMAC of taskId.timestamp.
    expect(new Webhook(secret).verify(got!.body, got!.headers as Record<string, string>)).toEqual(body);
    expect(got!.headers['webhook-id']).toBe(`msg_${ok}`);
    const ts = Number(got!.headers['x-webhook-timestamp']);
    expect(got!.headers['x-webhook-signature']).toBe(legacySignature(secret, ok, ts));

    const [failed] = await delivered('/suno-bad');
    const fb = JSON.parse(failed!.body);
    expect(fb).toMatchObject({ code: 501, data: { callbackType: 'error', task_id: bad, data: null } });
    expect(fb.data.error).toBe(fb.msg);
    expect(new Webhook(secret).verify(failed!.body, failed!.headers as Record<string, string>)).toEqual(fb);
    // The receiver has the body before the worker writes the outcome down.
    const noted = await eventually(async () => ((await info(s, a.key, ok)).callback?.status === 'delivered' ? (await info(s, a.key, ok)).callback : null));
    expect(noted).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200 });
  });

  it('refusals answer 400 naming the field as sent, and charge nothing', async () => {
    const a = await s.account(1);
    const base = { prompt: 'a song', customMode: false, instrumental: false, model: 'V5' };
    const cases: Array<[unknown, number, RegExp]> = [
      [{ ...base, model: 'V3_5' }, 400, /^model must be one of V4, V4_5, V4_5PLUS, V4_5ALL, V5, V5_5, V6, V6_WILD, V6_MINI \(got "V3_5"\)$/],
      [{ ...base, model: 5 }, 400, /^model must be one of V4, .* \(got 5\)$/],
      [{ prompt: 'a song', customMode: false }, 422, /^model is required; one of V4, /],
      [{ ...base, personaId: 'p1' }, 400, /^personaId is not a field of the \/api\/v1\/generate body .*its fields are prompt, customMode, /],
      [{ ...base, style: 'jazz' }, 400, /^style applies only when customMode is true for suno-v6/],
      [
        { ...base, customMode: true, title: 'T', styleWeight: 0.33 },
        400,
        /^styleWeight must be "auto" or a number from 0 to 1 in steps of 0\.05 for suno-v6 \(got 0\.33\)$/,
      ],
      [{ ...base, customMode: true, title: 'T', vocalGender: 'x' }, 400, /^vocalGender must be one of "auto", "female", "male" for suno-v6 \(got "x"\)$/],
      [{ ...base, customMode: true }, 400, /^title is required for suno-v6 when customMode is true/],
      [{ ...base, callBackUrl: 'ftp://x.example.com/hook' }, 400, /^callBackUrl: must be an http/],
      [[1], 400, /^request body must be a JSON object/],
    ];
    for (const [body, status, msg] of cases) {
      const res = await generate(a.key, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.msg, JSON.stringify(body)).toMatch(msg);
    }
    expect((await s.call('GET', '/api/v1/user/balance', { key: a.key })).body.data.balance).toBe('1.0000');
    expect(await s.services.database.db.selectFrom('tasks').select('id').where('account_id', '=', a.id).execute()).toEqual([]);
  });

  it('an Idempotency-Key replays the same task without a second charge; the key may not be reused for another body', async () => {
    const a = await s.account(1);
    const body = { prompt: 'a song', customMode: false, instrumental: false, model: 'V5' };
    const one = await generate(a.key, body, { 'idempotency-key': 'suno-1' });
    const two = await generate(a.key, body, { 'idempotency-key': 'suno-1' });
    expect(two.body.data.taskId).toBe(one.body.data.taskId);
    expect(two.headers.get('idempotent-replayed')).toBe('true');
    const other = await generate(a.key, { ...body, prompt: 'another song' }, { 'idempotency-key': 'suno-1' });
    expect(other.status).toBe(400);
    expect(
      await s.services.database.db.selectFrom('ledger_entries').select('kind').where('account_id', '=', a.id).where('kind', '=', 'charge').execute(),
    ).toHaveLength(1);
  });

  it("record-info: 404 for another account's task and for a task of another model; the scope tasks:write is needed to create", async () => {
    const a = await s.account(5);
    const b = await s.account(5);
    const id = await created(a.key, { prompt: 'a song', customMode: false, instrumental: false, model: 'V5' });
    const other = await s.call('GET', `/api/v1/generate/record-info?taskId=${id}`, { key: b.key });
    expect(other.status).toBe(404);
    const image = await s.call('POST', '/api/v1/jobs/createTask', { key: a.key, body: { model: 'nano-banana-2', input: { prompt: 'a cat' } } });
    const notMusic = await s.call('GET', `/api/v1/generate/record-info?taskId=${image.body.data.taskId}`, { key: a.key });
    expect(notMusic.status).toBe(404);
    expect(notMusic.body.msg).toMatch(/is a nano-banana-2 task, not a suno-v6 one; read it with GET \/api\/v1\/jobs\/recordInfo/);
    const missing = await s.call('GET', '/api/v1/generate/record-info', { key: a.key });
    expect(missing.status).toBe(422);
    const readOnly = await s.services.accounts.createKey(a.id, { scopes: ['tasks:read'] });
    const refused = await generate(readOnly.apiKey, { prompt: 'a song', customMode: false, model: 'V5' });
    expect(refused.status).toBe(403);
  });
});
