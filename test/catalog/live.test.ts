import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServices, type Services } from '../../src/services.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { SetClock } from '../tasks/support.js';

/**
 * Models changed live (issue 33 item 3, decisions 3304-3307): definitions stored through the admin
 * API apply at once in the process that made the change and, through the database, in another
 * process sharing it once MODEL_SWITCH_CACHE_MS of its (injected) clock have passed.
 */

const ADMIN = 'admin-token-0123456789';
const ID = 'acme/text-to-image';

/** A small definition, as an operator would write it. */
function acme(rate1k = '0.030', extra: Record<string, unknown> = {}) {
  return {
    title: 'Acme Image',
    kind: 'image',
    description: 'Text to image at 1K or 2K.',
    inputs: {
      prompt: { type: 'text', max: 4000, required: true, description: 'What the image shows.' },
      resolution: { type: 'choice', values: ['1K', '2K'], default: '1K', description: 'Size class.' },
    },
    price: { unit: 'image', by: 'resolution', rates: { '1K': rate1k, '2K': '0.045' } },
    routes: [{ backend: 'local' }],
    ...extra,
  };
}

describe.each(dialects())('live model definitions on %s', (dialect) => {
  let s: TestServer;
  let other: Services;
  const clockA = new SetClock(Date.parse('2026-12-01T10:00:00Z'));
  const clockB = new SetClock(Date.parse('2026-12-01T10:00:00Z'));

  beforeAll(async () => {
    s = await startServer(dialect, { ADMIN_TOKEN: ADMIN, MODEL_SWITCH_CACHE_MS: '2000' }, undefined, { clock: clockA });
    // A second process (service instance) over the same database, with its own clock.
    other = await buildServices(s.config, { clock: clockB });
  }, 60_000);
  afterAll(async () => {
    await other?.close();
    await s?.close();
  });

  const admin = (method: string, path: string, body?: unknown) =>
    s.call(method, `/admin/v1${path}`, { body, headers: { authorization: `Bearer ${ADMIN}`, 'x-gengate-actor': 'alice' } });
  const def = (id = ID) => `/definitions/${encodeURIComponent(id)}`;
  const createTask = (key: string, model: string, input: Record<string, unknown>) => s.call('POST', '/api/v1/jobs/createTask', { key, body: { model, input } });
  const taskRow = (id: string) =>
    s.services.database.db.selectFrom('tasks').select(['price_micros', 'model_version']).where('id', '=', id).executeTakeFirstOrThrow();

  it('a model added through the admin API takes tasks here at once and in another process after its poll interval', async () => {
    const a = await s.account(5);
    expect((await createTask(a.key, ID, { prompt: 'a cat' })).status).toBe(400);
    const documented = async () => JSON.stringify((await s.call('GET', '/openapi.json')).body).includes(ID);
    expect(await documented()).toBe(false);
    // The other process has polled: its next poll is due 2 s later on its clock.
    await other.definitions.tick();
    const put = await admin('PUT', def(), { definition: acme(), note: 'first' });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.data).toMatchObject({ id: ID, source: 'database', version: 1, retired: false, updatedBy: 'admin-token:alice' });
    expect(put.body.data.versions).toEqual([expect.objectContaining({ version: 1, action: 'create', who: 'admin-token:alice', note: 'first' })]);

    const here = await createTask(a.key, ID, { prompt: 'a cat', resolution: '2K' });
    expect(here.status, JSON.stringify(here.body)).toBe(200);
    expect(await taskRow(here.body.data.taskId)).toMatchObject({ price_micros: 45_000, model_version: 1 });
    expect((await s.call('GET', '/api/v1/models')).body.data.some((m: { id: string }) => m.id === ID)).toBe(true);
    expect(await documented()).toBe(true);

    // Not yet due on the other process's clock: it still has the catalog it loaded.
    expect(await other.definitions.tick()).toBe(false);
    expect(other.catalog.find(ID)).toBeUndefined();
    clockB.t += 2000;
    expect(await other.definitions.tick()).toBe(true);
    expect(other.catalog.find(ID)).toMatchObject({ id: ID, version: 1 });
    const b = await other.accounts.create('b', 1_000_000);
    const principal = await other.auth.authenticate(`Bearer ${b.apiKey}`, null);
    const created = await other.tasks.create(principal, { model: ID, input: { prompt: 'a dog' } }, undefined);
    expect(await taskRow(created.taskId)).toMatchObject({ price_micros: 30_000, model_version: 1 });
  });

  it('a broken definition is refused with where and why, and the catalog in force stays as it was', async () => {
    const bad = acme();
    (bad.price.rates as Record<string, string>) = { '1K': '0.030' };
    const r = await admin('PUT', def(), { definition: bad });
    expect(r.status).toBe(400);
    expect(r.body.msg).toMatch(/definition of acme\/text-to-image refused .*price\.rates: has no rate for resolution "2K"/);
    expect(r.body.data.problems[0]).toMatchObject({ where: 'price.rates' });
    const v = await admin('POST', `${def()}/validate`, { definition: { ...acme(), kind: 'hologram' } });
    expect(v.status).toBe(400);
    expect(v.body.msg).toMatch(/kind/);
    expect((await admin('POST', `${def()}/validate`, { definition: acme('0.5') })).body.data).toMatchObject({ ok: true, fields: ['prompt', 'resolution'] });
    // A name another model already has is refused too.
    const clash = await admin('PUT', def('acme/clash'), { definition: { ...acme(), aliases: [{ name: 'nano-banana-2' }] } });
    expect(clash.status).toBe(400);
    expect(clash.body.msg).toMatch(/nano-banana-2/);
    const got = await admin('GET', def());
    expect(got.body.data).toMatchObject({ version: 1, versions: [expect.objectContaining({ version: 1 })] });
    expect(s.services.catalog.find(ID)?.price.rates['1K']).toBe(30_000);
  });

  it('an edit makes a new version; a task keeps the version and price it was created with; a stale edit is a 409', async () => {
    const a = await s.account(5);
    const before = await createTask(a.key, ID, { prompt: 'a cat' });
    const calculate = async () => (await s.call('GET', `/v1/pricing/calculate?model=${encodeURIComponent(ID)}`)).body.price_usd;
    const listed = async () => (await s.call('GET', '/v1/pricing')).body.models.find((m: { id: string }) => m.id === ID);
    expect(await calculate()).toBe(0.03);
    const put = await admin('PUT', def(), { definition: acme('0.050'), expectVersion: 1 });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.data.versions.map((v: { version: number; action: string }) => `${v.version}:${v.action}`)).toEqual(['2:edit', '1:create']);
    const after = await createTask(a.key, ID, { prompt: 'a cat' });
    expect(await taskRow(before.body.data.taskId)).toMatchObject({ price_micros: 30_000, model_version: 1 });
    expect(await taskRow(after.body.data.taskId)).toMatchObject({ price_micros: 50_000, model_version: 2 });
    // The calculator (its memo) and the price list follow.
    expect(await calculate()).toBe(0.05);
    expect(JSON.stringify(await listed())).toContain('0.05');
    const stale = await admin('PUT', def(), { definition: acme('0.060'), expectVersion: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body.msg).toMatch(/stored version is 2, this change was made on 1/);
    const preview = await admin('POST', `${def()}/preview`, {
      samples: [{ input: { prompt: 'x' } }, { input: { prompt: 'x', resolution: '2K' } }, { input: { resolution: '8K' } }],
    });
    expect(preview.body.data.samples).toEqual([
      { ok: true, price: '0.050000', priceMicros: 50_000 },
      { ok: true, price: '0.045000', priceMicros: 45_000 },
      { ok: false, error: expect.stringMatching(/resolution/) },
    ]);
    const draft = await admin('POST', `${def()}/preview`, { definition: acme('0.010'), samples: [{ input: { prompt: 'x' } }] });
    expect(draft.body.data.samples[0]).toMatchObject({ priceMicros: 10_000 });
    expect(s.services.catalog.find(ID)?.price.rates['1K']).toBe(50_000);
  });

  it('a retired model takes no new tasks, here and in the other process; its tasks stay readable; restore brings it back', async () => {
    const a = await s.account(5);
    const old = await createTask(a.key, ID, { prompt: 'a cat' });
    const retire = await admin('POST', `${def()}/retire`, { note: 'upstream gone' });
    expect(retire.status, JSON.stringify(retire.body)).toBe(200);
    expect(retire.body.data).toMatchObject({ retired: true, version: 3 });
    const refused = await createTask(a.key, ID, { prompt: 'a cat' });
    expect(refused.status).toBe(400);
    expect(refused.body.msg).toMatch(/^model acme\/text-to-image was retired by the operator on .* \(definition version 3\) and takes no new tasks/);
    expect((await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${old.body.data.taskId}`, { key: a.key })).status).toBe(200);
    expect((await s.call('GET', '/api/v1/models')).body.data.some((m: { id: string }) => m.id === ID)).toBe(false);
    const listed = (await admin('GET', '/definitions')).body.data.find((d: { id: string }) => d.id === ID);
    expect(listed).toMatchObject({ retired: true, version: 3 });
    expect((await admin('PUT', def(), { definition: acme() })).status).toBe(409);

    clockB.t += 2000;
    await other.definitions.tick();
    expect(other.catalog.find(ID)?.retired).toMatchObject({ version: 3 });

    const restore = await admin('POST', `${def()}/restore`, {});
    expect(restore.body.data).toMatchObject({ retired: false, version: 4 });
    expect((await createTask(a.key, ID, { prompt: 'a cat' })).status).toBe(200);
    // An earlier version back in force: version 1's price.
    const back = await admin('POST', `${def()}/restore`, { version: 1, note: 'old price' });
    expect(back.body.data.versions[0]).toMatchObject({ version: 5, action: 'restore', note: 'old price' });
    expect(s.services.catalog.find(ID)?.price.rates['1K']).toBe(30_000);
  });

  it('a shipped model is edited over its file and retired; restore falls back to the file', async () => {
    const a = await s.account(5);
    const got = await admin('GET', def('seedream-flash'));
    expect(got.body.data).toMatchObject({ source: 'file', version: 0, definition: null });
    expect((await admin('POST', `${def('seedream-flash')}/retire`, {})).status).toBe(200);
    expect((await createTask(a.key, 'seedream-flash', { prompt: 'x' })).status).toBe(400);
    // Under its kie.ai alias too.
    expect((await createTask(a.key, 'seedream/5-lite-text-to-image', { prompt: 'x' })).body.msg).toMatch(/seedream-flash was retired/);
    expect((await admin('POST', `${def('seedream-flash')}/restore`, {})).body.data).toMatchObject({ retired: false, source: 'file' });
    expect((await createTask(a.key, 'seedream-flash', { prompt: 'x' })).status).toBe(200);
    expect((await admin('GET', def('no-such'))).status).toBe(404);
    expect((await s.call('GET', '/admin/v1/definitions')).status).toBe(401);
  });

  it('creates racing reloads all succeed: the catalog is swapped whole', async () => {
    const a = await s.account(50);
    const creates = Array.from({ length: 40 }, () => createTask(a.key, ID, { prompt: 'a cat' }));
    let version = (await admin('GET', def())).body.data.version as number;
    for (let i = 0; i < 4; i++) {
      const r = await admin('PUT', def(), { definition: acme(`0.0${20 + i}`), expectVersion: version });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      version = r.body.data.version;
    }
    const answers = await Promise.all(creates);
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
  });
});
