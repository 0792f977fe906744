import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { open, untilClosed, within } from '../helpers/sockets.js';

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** POSTs `body` (text, sent in `pieces` writes) to the base64 upload; status and JSON answer. */
function post(s: TestServer, key: string, body: string, pieces = 1): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${s.url}/api/file-base64-upload`,
      { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    const step = Math.ceil(body.length / pieces);
    for (let i = 0; i < body.length; i += step) req.write(body.slice(i, i + step));
    req.end();
  });
}

/**
 * Issue 39 finding 1: /api/file-base64-upload reads its JSON as it arrives and decodes base64Data
 * on the way, so the body is never held whole: a body whose first bytes are no known file is
 * refused before the rest has even been sent, and any shape of the JSON (fields in any order,
 * escaped slashes, line breaks, a data: URL, chunks split anywhere) stores the same bytes.
 */
for (const dialect of dialects()) {
  describe(`the base64 upload is streamed on ${dialect}`, () => {
    let s: TestServer;
    let key: string;
    beforeAll(async () => {
      s = await startServer(dialect, { MODERATION_IMAGES: 'off', HTTP_BODY_MIN_BYTES_PER_SECOND: '0', HTTP_REQUEST_TIMEOUT_MS: '600000' });
      key = (await s.account(1)).key;
    });
    afterAll(async () => {
      await s.close();
    });

    it('bytes that are no known file are refused (422) while the body is still far from complete', async () => {
      const socket = await open(s.url);
      const closed = untilClosed(socket);
      const junk = Buffer.alloc(256 * 1024, 7).toString('base64');
      socket.write(
        `POST /api/file-base64-upload HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${50 * 1024 * 1024}\r\n\r\n` +
          `{"fileName":"a.png","base64Data":"${junk}`,
      );
      const text = await within(closed, 15_000, 'refusing the upload before its body ends');
      expect(Number(text.split(' ')[1]), text).toBe(422);
      expect(text).toMatch(/"success":false/);
    });

    it('the same bytes are stored whatever the shape of the JSON and however it is split', async () => {
      const b64 = PNG.toString('base64');
      const escaped = b64.replace(/\//g, '\\/');
      const lines = b64.replace(/(.{16})/g, '$1\\n');
      const bodies = [
        JSON.stringify({ base64Data: b64, fileName: 'one.png', uploadPath: 'a/b' }),
        JSON.stringify({ uploadPath: 'a/b', fileName: 'one.png', base64Data: `data:image/png;base64,${b64}` }),
        `{ "fileName" : "one.png" , "extra": {"x": [1, "}\\""]}, "base64Data" : "${escaped}", "uploadPath": "a/b" }`,
        `{"base64Data":"${lines}","uploadPath":"a/b","fileName":"one.png"}`,
      ];
      for (const [i, body] of bodies.entries()) {
        for (const pieces of [1, 7, body.length]) {
          const r = await post(s, key, body, pieces);
          expect(r.status, `${i}/${pieces}: ${JSON.stringify(r.body)}`).toBe(200);
          expect(r.body.data).toMatchObject({ fileName: 'one.png', filePath: 'a/b/one.png', fileSize: PNG.length, mimeType: 'image/png' });
          const got = Buffer.from(await (await fetch(s.url + new URL(r.body.data.downloadUrl as string).pathname)).arrayBuffer());
          expect(got.equals(PNG)).toBe(true);
        }
      }
    });

    it('malformed bodies are refused naming the field', async () => {
      const cases: Array<[string, number, RegExp]> = [
        ['{"fileName":"x.png"}', 422, /^base64Data is required/],
        ['{"base64Data":""}', 422, /^base64Data is required/],
        ['{"base64Data":"abc$def"}', 400, /^base64Data must be base64 text/],
        ['{"base64Data":"data:image/png,abcd"}', 400, /data: URL must be base64-encoded/],
        ['{"base64Data":42}', 400, /^base64Data: must be a string/],
        ['{"base64Data":"iVBORw0KGgo=AAAA"}', 400, /^base64Data must be base64 text/],
        ['{"base64Data":"iVBO"', 400, /not valid JSON/],
        ['["iVBO"]', 400, /not valid JSON/],
        [`{"base64Data":"${PNG.toString('base64')}","fileName":7}`, 400, /fileName/],
      ];
      for (const [body, status, msg] of cases) {
        const r = await post(s, key, body);
        expect(r.status, `${body}: ${JSON.stringify(r.body)}`).toBe(status);
        expect(r.body).toMatchObject({ success: false, code: status, data: null });
        expect(r.body.msg).toMatch(msg);
      }
    });
  });
}
