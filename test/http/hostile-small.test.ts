import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const ADMIN = 'hostile-small-admin-token-0123456789';

/** Issue 17 finding 6 (the smaller ones): each answered wrong before; each now has the envelope with a precise 4xx. */
for (const dialect of dialects()) {
  describe(`hostile input, smaller findings, on ${dialect}`, () => {
    let s: TestServer;
    let key: string;
    let accountId: string;
    const admin = { authorization: `Bearer ${ADMIN}` };
    beforeAll(async () => {
      s = await startServer(dialect, { ADMIN_TOKEN: ADMIN });
      ({ key, id: accountId } = await s.account(5));
    });
    afterAll(async () => {
      await s?.close();
    });
    const envelope = (r: { status: number; body: any }, status: number, msg: RegExp) => {
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body.code).toBe(status);
      expect(r.body.msg).toMatch(msg);
    };

    it('jobs/list refuses a query parameter it does not know, naming it and the ones it takes', async () => {
      envelope(await s.call('GET', '/api/v1/jobs/list?status=fail', { key }), 400, /unknown query parameter "status"; jobs\/list takes limit, state, before/);
      envelope(await s.call('GET', '/api/v1/jobs/list?limit=5&page=2', { key }), 400, /"page"/);
      expect((await s.call('GET', '/api/v1/jobs/list?limit=5&state=fail', { key })).status).toBe(200);
    });

    it("a key's model allowlist refuses a model the catalog does not know, and writes no key", async () => {
      const before = (await s.call('GET', `/admin/v1/accounts/${accountId}/keys`, { headers: admin })).body.data.length;
      envelope(
        await s.call('POST', `/admin/v1/accounts/${accountId}/keys`, { headers: admin, body: { models: ['suno-v6', 'sunno-v6'] } }),
        400,
        /models: unknown model "sunno-v6"/,
      );
      await expect(s.services.accounts.createKey(accountId, { models: ['nope'] })).rejects.toThrow(/unknown model "nope"/);
      expect((await s.call('GET', `/admin/v1/accounts/${accountId}/keys`, { headers: admin })).body.data.length).toBe(before);
      const good = await s.call('POST', `/admin/v1/accounts/${accountId}/keys`, { headers: admin, body: { models: ['suno-v6'] } });
      expect(good.status, JSON.stringify(good.body)).toBe(200);
    });

    it('a JSON body sent without Content-Type is a 400 that names the header', async () => {
      // A Uint8Array body: fetch sends no Content-Type of its own.
      const body = new TextEncoder().encode(JSON.stringify({ model: 'suno-v6', input: { prompt: 'x' } }));
      const res = await fetch(`${s.url}/api/v1/jobs/createTask`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body });
      envelope({ status: res.status, body: await res.json() }, 400, /the Content-Type header is missing; send Content-Type: application\/json/);
    });
  });
}
