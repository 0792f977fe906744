import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { makeStill, useTmpDir } from '../media/helpers.js';
import { upload } from '../files/support.js';

const ADMIN = 'hostile-admin-token-0123456789';

/** Issue 17 finding 5: input that answered 500 (or Fastify's own answer) gets the envelope with a 4xx, never cached. */
for (const dialect of dialects()) {
  describe(`hostile input on ${dialect}`, () => {
    let s: TestServer;
    let key: string;
    const tmp = useTmpDir();
    beforeAll(async () => {
      s = await startServer(dialect, { ADMIN_TOKEN: ADMIN, MODERATION_IMAGES: 'off' });
      key = (await s.account(5)).key;
    });
    afterAll(async () => {
      await s?.close();
    });
    const envelope = (r: { status: number; body: any; headers: Headers }, status: number, msg: RegExp) => {
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body.code).toBe(status);
      expect(r.body.msg).toMatch(msg);
      expect(r.headers.get('cache-control')).toBe('no-store');
    };

    it('a body nested 50,000 arrays deep is a 400 naming what was expected', async () => {
      const deep = '['.repeat(50_000) + ']'.repeat(50_000);
      envelope(await s.call('POST', '/api/v1/jobs/createTask', { key, body: deep }), 400, /JSON object|expected object/);
      envelope(await s.call('POST', '/admin/v1/accounts', { body: deep, headers: { authorization: `Bearer ${ADMIN}` } }), 400, /JSON object|expected object/);
      envelope(
        await s.call('POST', '/api/v1/jobs/createTask', {
          key,
          body: { model: 'nano-banana-2', input: { prompt: 'x', image_input: JSON.parse('['.repeat(3000) + ']'.repeat(3000)) } },
        }),
        400,
        /image_input/,
      );
    });

    it('a malformed %-escape in the path (an admin model or account name) is a 400 in the envelope', async () => {
      const admin = { authorization: `Bearer ${ADMIN}` };
      envelope(await s.call('POST', '/admin/v1/models/%E0%A4%A/disable', { headers: admin }), 400, /malformed %-escape/);
      envelope(await s.call('GET', '/admin/v1/accounts/%zz', { headers: admin }), 400, /malformed %-escape/);
      envelope(await s.call('GET', '/files/%/x.png'), 400, /malformed %-escape/);
    });

    it("a malformed %-escape in a link to one's own upload, anywhere in the input, or in an admin model name is a 4xx", async () => {
      const up = await upload(s, key, await makeStill(tmp('own.png')), 'own.png');
      const own = new URL(up.body.data.downloadUrl ?? up.body.data.fileUrl ?? up.body.data.url);
      const bad = `${s.url}${own.pathname.slice(0, own.pathname.lastIndexOf('/'))}/%E0%A4%A.png`;
      for (const input of [
        { prompt: 'x', image_input: [bad] },
        { prompt: 'x', image_input: [bad], nsfw_check: true },
      ]) {
        const r = await s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: 'nano-banana-2', input } });
        expect(r.status, JSON.stringify(r.body)).toBeGreaterThanOrEqual(400);
        expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
      }
      const r = await s.call('POST', '/admin/v1/models/%25zz/disable', { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(r.status, JSON.stringify(r.body)).toBe(404);
    });

    it('a file whose bytes are gone is a 404 in the envelope, never cached', async () => {
      const still = await makeStill(tmp('still.png'));
      const up = await upload(s, key, still, 'still.png');
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      const link = new URL(up.body.data.downloadUrl ?? up.body.data.fileUrl ?? up.body.data.url);
      const [, , id] = link.pathname.split('/');
      const row = await s.services.database.db.selectFrom('files').select('blob_key').where('id', '=', id!).executeTakeFirstOrThrow();
      await rm(path.join(s.db.dir, 'files', row.blob_key), { force: true });
      envelope(await s.call('GET', link.pathname), 404, /no longer stored/);
    });

    it('a NUL character in a path, query or body is a 400 on every database (PostgreSQL refuses it in text)', async () => {
      const admin = { authorization: `Bearer ${ADMIN}` };
      envelope(
        await s.call('GET', '/admin/v1/accounts/%00', { headers: admin }),
        dialect === 'postgres' ? 400 : 404,
        dialect === 'postgres' ? /NUL character/ : /.+/,
      );
      const r = await s.call('GET', '/files/%00/x.png');
      expect([400, 404]).toContain(r.status);
      expect(r.headers.get('cache-control')).toBe('no-store');
    });

    it('an unknown asset of the reference page is a 404 that is not cached', async () => {
      envelope(await s.call('GET', '/docs/nope.js'), 404, /no file/);
    });
  });
}
