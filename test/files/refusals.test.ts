import { execFile } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { openAsBlob } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

/** A body far larger than what the kernel's socket buffers hold, so the client is still sending when the answer comes. */
const BIG = 24 * 1024 * 1024;

/** POSTs `file` as multipart field `field` with Node's own fetch; the status, or the error's code. */
async function byFetch(url: string, file: string, field: string, key?: string): Promise<number | string> {
  const form = new FormData();
  form.append(field, await openAsBlob(file), 'big.bin');
  try {
    const res = await fetch(url, { method: 'POST', body: form, headers: key ? { authorization: `Bearer ${key}` } : {} });
    await res.arrayBuffer();
    return res.status;
  } catch (e) {
    return ((e as Error).cause as { code?: string } | undefined)?.code ?? (e as Error).message;
  }
}

/** The same with curl; the status curl printed, or its exit code and message. */
function byCurl(url: string, file: string, field: string, key?: string): Promise<number | string> {
  const args = ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-F', `${field}=@${file}`, ...(key ? ['-H', `authorization: Bearer ${key}`] : []), url];
  return new Promise((resolve) => {
    execFile('curl', args, (err, stdout, stderr) => resolve(err ? `curl exit ${err.code}: ${stderr.trim()}` : Number(stdout)));
  });
}

/**
 * Decision 2402 (issue 41 item 4, issue 39 finding 16): a request refused before its body is read
 * gets its answer, not a broken pipe, although the client is still sending a large body when the
 * server answers and closes the connection.
 */
describe('a refusal before the body is read is an answer', () => {
  let s: TestServer;
  let key: string;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    s = await startServer('sqlite', { RUN_ENGINE: 'false', UPLOAD_MAX_IMAGE_BYTES: String(1024 * 1024), UPLOAD_MAX_MEDIA_BYTES: String(2 * 1024 * 1024) });
    key = (await s.account(1)).key;
    dir = await mkdtemp(path.join(tmpdir(), 'gengate-refusals-'));
    file = path.join(dir, 'big.bin');
    const fh = await open(file, 'w');
    await fh.truncate(BIG); // zeros: no known format, but the size is refused first
    await fh.close();
  });
  afterAll(async () => {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  const cases: Array<[string, string, boolean, number]> = [
    ['no key', 'file', false, 401],
    ['no field named file', 'photo', true, 422],
    ['a file over the upload limit', 'file', true, 422],
  ];
  for (const [what, field, withKey, status] of cases) {
    it(`${what}: ${status} to Node's fetch and to curl, three times each`, async () => {
      const url = `${s.url}/api/v1/files/upload`;
      for (let i = 0; i < 3; i++) {
        expect(await byFetch(url, file, field, withKey ? key : undefined)).toBe(status);
        expect(await byCurl(url, file, field, withKey ? key : undefined)).toBe(status);
      }
    });
  }

  it("a JSON body over BODY_LIMIT_BYTES: 422 to Node's fetch and to curl, three times each", async () => {
    const url = `${s.url}/api/v1/jobs/createTask`;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const body = `{"model":"nano-banana-2","input":{"prompt":"${'a'.repeat(BIG)}"}}`;
    const curlArgs = ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-H', `authorization: ${headers.authorization}`, '-H', 'content-type: application/json'];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(url, { method: 'POST', body, headers });
      expect(res.status).toBe(422);
      expect(((await res.json()) as { msg: string }).msg).toMatch(/larger than/);
      const curled = await new Promise((resolve) => {
        execFile('curl', [...curlArgs, '--data-binary', `@${file}`, url], (err, stdout, stderr) =>
          resolve(err ? `curl exit ${err.code}: ${stderr.trim()}` : Number(stdout)),
        );
      });
      expect(curled).toBe(422);
    }
  });
});
