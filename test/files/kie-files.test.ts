import { openAsBlob } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ffmpeg, makeClip, makeStill, makeTone, useTmpDir } from '../media/helpers.js';
import { MovableClock, fetchFile } from '../tasks/support.js';
import { startFileHost } from '../fakes/file-host.js';

type Answer = { status: number; body: any };

/** POSTs a file to /api/file-stream-upload as kie.ai clients do; `after` puts the text fields after the file. */
async function streamUpload(
  s: TestServer,
  key: string | undefined,
  file: string,
  name: string,
  fields: Record<string, string>,
  after = false,
): Promise<Answer> {
  const form = new FormData();
  const text = () => Object.entries(fields).forEach(([k, v]) => form.append(k, v));
  if (!after) text();
  form.append('file', await openAsBlob(file), name);
  if (after) text();
  return postForm(s, '/api/file-stream-upload', key, form);
}

/** POSTs a multipart form with plain http: a refused body is cut off (the server answers, then closes), which fetch reports as EPIPE instead of the answer. */
async function postForm(s: TestServer, path: string, key: string | undefined, form: FormData): Promise<Answer> {
  const encoded = new Response(form);
  const body = Buffer.from(await encoded.arrayBuffer());
  const headers = { 'content-type': encoded.headers.get('content-type')!, ...(key ? { authorization: `Bearer ${key}` } : {}) };
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(`${s.url}${path}`, { method: 'POST', headers }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', (e) => !answered && reject(e));
    req.end(body);
  });
}

/** A PNG of random noise (does not compress): about 790 KB, over the 200 KB photo limit of these servers. */
const makeNoise = (file: string) => ffmpeg('-f', 'lavfi', '-i', 'color=c=gray:s=512x512:d=1,noise=alls=100:allf=t', '-frames:v', '1', file);

/** The refusal shape of kie.ai's upload endpoints. */
function refusedKie(r: Answer, status: number, msg: RegExp) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ success: false, code: status, data: null });
  expect(r.body.msg).toMatch(msg);
}

/** Checks kie.ai's upload answer and that its downloadUrl serves exactly `file`'s bytes (or `bytes`). */
async function servesBack(s: TestServer, r: Answer, expected: { filePath: string; mimeType: string; file: string }) {
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const { data } = r.body;
  expect(r.body).toEqual({ success: true, code: 200, msg: 'File uploaded successfully', data: expect.any(Object) });
  const fileName = expected.filePath.split('/').pop();
  expect(data).toEqual({
    fileName,
    filePath: expected.filePath,
    downloadUrl: expect.stringMatching(new RegExp(`/files/[A-Za-z0-9_-]{22}/${fileName!.replace('.', '\\.')}$`)),
    fileSize: (await stat(expected.file)).size,
    mimeType: expected.mimeType,
    uploadedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
  });
  const got = await fetchFile(s, data.downloadUrl);
  expect(got.status).toBe(200);
  expect(got.headers.get('content-type')).toBe(expected.mimeType);
  expect(Buffer.from(await got.arrayBuffer()).equals(await readFile(expected.file))).toBe(true);
}

describe.each(dialects())('kie.ai file endpoints on %s', (dialect) => {
  let s: TestServer;
  let open: TestServer;
  let host: Awaited<ReturnType<typeof startFileHost>>;
  let key: string;
  let accountId: string;
  const clock = new MovableClock();
  const tmp = useTmpDir();
  const LIMITS = { RUN_ENGINE: 'false', UPLOAD_MAX_IMAGE_BYTES: '200000' };
  beforeAll(async () => {
    host = await startFileHost();
    s = await startServer(dialect, LIMITS, undefined, { clock });
    open = await startServer(dialect, { ...LIMITS, ALLOW_PRIVATE_NETWORK: 'true' });
    ({ key, id: accountId } = await s.account(12.345678));
  });
  afterAll(async () => {
    await s.close();
    await open.close();
    await host.close();
  });

  it.each([
    ['photo.jpg', 'image/jpeg', (f: string) => makeStill(f)],
    ['clip.mp4', 'video/mp4', (f: string) => makeClip(f, { seconds: 2 })],
    ['song.mp3', 'audio/mpeg', (f: string) => makeTone(f, 2)],
  ])('file-stream-upload stores %s under uploadPath and serves the same bytes', async (name, mimeType, make) => {
    const file = await make(tmp(name));
    const r = await streamUpload(s, key, file, name, { uploadPath: 'images/user-uploads' });
    await servesBack(s, r, { filePath: `images/user-uploads/${name}`, mimeType, file });
    // The same upload service: the link is an upload of this account, usable in createTask like any other.
    const id = new URL(r.body.data.downloadUrl).pathname.split('/')[2]!;
    const row = await s.services.database.db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ account_id: accountId, purpose: 'upload', task_id: null });
    expect(Number(row.expires_at) - Number(row.created_at)).toBeGreaterThan(24 * 3_600_000 - 1000);
    expect(Number(row.expires_at) - Number(row.created_at)).toBeLessThanOrEqual(24 * 3_600_000);
  });

  it('file-stream-upload reads uploadPath and fileName sent after the file, and fileName wins over the part name', async () => {
    const file = await makeTone(tmp('tone.wav'), 2);
    const r = await streamUpload(s, key, file, 'part-name.wav', { uploadPath: 'audio', fileName: 'voice.wav' }, true);
    await servesBack(s, r, { filePath: 'audio/voice.wav', mimeType: 'audio/wav', file });
    const bare = await streamUpload(s, key, file, 'part-name.wav', {});
    expect(bare.body.data).toMatchObject({ fileName: 'part-name.wav', filePath: 'part-name.wav' });
  });

  it('sanitises uploadPath and fileName: no traversal, no control characters', async () => {
    const file = await makeStill(tmp('x.png'));
    const cases: Array<[Record<string, string>, string]> = [
      [{ uploadPath: '../../etc/./pa\u0007ss//', fileName: '../../secret\u0001.png' }, 'etc/pa-ss/secret.png'],
      [{ uploadPath: '..\\..\\windows\\system32', fileName: 'C:\\boot.ini' }, 'windows/system32/boot.png'],
      [{ uploadPath: '/../..', fileName: '..' }, 'upload.png'],
      [{ uploadPath: 'a/b/c/d/e/f/g', fileName: 'ok.png' }, 'a/b/c/d/e/ok.png'],
    ];
    for (const [fields, filePath] of cases) {
      const r = await streamUpload(s, key, file, 'x.png', fields);
      expect(r.status, JSON.stringify(fields)).toBe(200);
      expect(r.body.data.filePath, JSON.stringify(fields)).toBe(filePath);
      expect(r.body.data.downloadUrl.endsWith(`/${filePath.split('/').pop()}`)).toBe(true);
    }
    const b64 = await s.call('POST', '/api/file-base64-upload', {
      key,
      body: { base64Data: (await readFile(file)).toString('base64'), uploadPath: '../../../tmp', fileName: '../x\u0000y.png' },
    });
    expect(b64.body.data.filePath).toBe('tmp/x-y.png');
  });

  it('file-base64-upload takes raw base64 and a data: URL', async () => {
    const file = await makeStill(tmp('b.png'));
    const b64 = (await readFile(file)).toString('base64');
    const raw = await s.call('POST', '/api/file-base64-upload', { key, body: { base64Data: b64, uploadPath: 'b64', fileName: 'raw.png' } });
    await servesBack(s, raw, { filePath: 'b64/raw.png', mimeType: 'image/png', file });
    const dataUrl = await s.call('POST', '/api/file-base64-upload', {
      key,
      body: { base64Data: `data:image/png;base64,${b64}`, uploadPath: 'b64', fileName: 'url.png' },
    });
    await servesBack(s, dataUrl, { filePath: 'b64/url.png', mimeType: 'image/png', file });
    // Line breaks (MIME-style base64) are fine; the kind is still decided by the bytes.
    const wrapped = b64.replace(/.{76}/g, '$&\n');
    const audio = await makeTone(tmp('t.mp3'), 2);
    const mp3 = await s.call('POST', '/api/file-base64-upload', { key, body: { base64Data: wrapped, fileName: 'named.mp3' } });
    expect(mp3.body.data).toMatchObject({ fileName: 'named.png', mimeType: 'image/png' });
    const song = await s.call('POST', '/api/file-base64-upload', { key, body: { base64Data: (await readFile(audio)).toString('base64'), uploadPath: 'a' } });
    expect(song.body.data).toMatchObject({ filePath: 'a/upload.mp3', mimeType: 'audio/mpeg' });
  });

  it('file-base64-upload refuses what is not base64, and a missing base64Data, in kie.ai shape', async () => {
    refusedKie(
      await s.call('POST', '/api/file-base64-upload', { key, body: { base64Data: 'not base64 at all!', fileName: 'x.png' } }),
      400,
      /^base64Data must be base64/,
    );
    refusedKie(await s.call('POST', '/api/file-base64-upload', { key, body: { base64Data: 'data:image/png,abc' } }), 400, /data: URL must be base64-encoded/);
    refusedKie(await s.call('POST', '/api/file-base64-upload', { key, body: { fileName: 'x.png' } }), 422, /^base64Data is required/);
    refusedKie(await s.call('POST', '/api/file-base64-upload', { key, body: { base64Data: '' } }), 422, /^base64Data is required/);
    refusedKie(
      await s.call('POST', '/api/file-base64-upload', { key, body: { base64Data: Buffer.from('plain text, not media').toString('base64') } }),
      422,
      /must be a JPG/,
    );
  });

  it('refuses an oversize photo with 422 in kie.ai shape, on all three endpoints, and keeps nothing', async () => {
    const noise = await makeNoise(tmp('noise.png'));
    expect((await stat(noise)).size).toBeGreaterThan(200_000);
    const before = await s.services.database.db
      .selectFrom('files')
      .select((e) => e.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const overMsg = /file must be at most 0\.2 MB for a photo \(PNG\)/;
    refusedKie(await streamUpload(s, key, noise, 'noise.png', { uploadPath: 'big' }), 422, overMsg);
    const b64 = (await readFile(noise)).toString('base64');
    refusedKie(await s.call('POST', '/api/file-base64-upload', { key, body: { base64Data: b64, uploadPath: 'big', fileName: 'noise.png' } }), 422, overMsg);
    refusedKie(
      await open.call('POST', '/api/file-url-upload', { key: (await open.account(1)).key, body: { fileUrl: host.serve('noise.png', noise) } }),
      422,
      overMsg,
    );
    // /api/v1/files/upload answers the same oversize with the same status.
    const v1 = new FormData();
    v1.append('file', await openAsBlob(noise), 'noise.png');
    const plain = await postForm(s, '/api/v1/files/upload', key, v1);
    expect(plain.status).toBe(422);
    expect(plain.body).toMatchObject({ code: 422, error: 'validation_error' });
    expect(plain.body.msg).toMatch(overMsg);
    const after = await s.services.database.db
      .selectFrom('files')
      .select((e) => e.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('file-url-upload refuses a private address unless ALLOW_PRIVATE_NETWORK', async () => {
    const file = await makeStill(tmp('host.jpg'));
    const link = host.serve('host.jpg', file);
    refusedKie(
      await s.call('POST', '/api/file-url-upload', { key, body: { fileUrl: link, uploadPath: 'x' } }),
      400,
      /^fileUrl must be a public http\(s\) link: 127\.0\.0\.1 is a private/,
    );
    refusedKie(await s.call('POST', '/api/file-url-upload', { key, body: { fileUrl: 'file:///etc/passwd' } }), 400, /^fileUrl must be a public http\(s\) link/);
    refusedKie(await s.call('POST', '/api/file-url-upload', { key, body: { uploadPath: 'x' } }), 422, /^fileUrl is required/);
    const other = await open.account(1);
    const r = await open.call('POST', '/api/file-url-upload', { key: other.key, body: { fileUrl: link, uploadPath: 'from/url' } });
    await servesBack(open, r, { filePath: 'from/url/host.jpg', mimeType: 'image/jpeg', file });
    const named = await open.call('POST', '/api/file-url-upload', { key: other.key, body: { fileUrl: link, fileName: 'given.jpg' } });
    expect(named.body.data.fileName).toBe('given.jpg');
    refusedKie(
      await open.call('POST', '/api/file-url-upload', { key: other.key, body: { fileUrl: `${host.base}/missing.jpg` } }),
      422,
      /could not be downloaded: the server answered HTTP 404/,
    );
  });

  it('upload endpoints need a valid key with files:write (refusals in kie.ai shape)', async () => {
    const file = await makeStill(tmp('k.png'));
    refusedKie(await streamUpload(s, undefined, file, 'k.png', { uploadPath: 'x' }), 401, /./);
    refusedKie(await streamUpload(s, 'gg_wrong_key_0000000000000000000000', file, 'k.png', { uploadPath: 'x' }), 401, /./);
    refusedKie(await s.call('POST', '/api/file-base64-upload', { key: 'gg_wrong', body: { base64Data: 'AAAA' } }), 401, /./);
    const readOnly = await s.services.accounts.createKey(accountId, { scopes: ['tasks:read', 'balance:read'] });
    refusedKie(await streamUpload(s, readOnly.apiKey, file, 'k.png', { uploadPath: 'x' }), 403, /files:write/);
    refusedKie(await s.call('POST', '/api/file-base64-upload', { key: readOnly.apiKey, body: { base64Data: 'AAAA' } }), 403, /files:write/);
    refusedKie(await s.call('POST', '/api/file-url-upload', { key: readOnly.apiKey, body: { fileUrl: 'https://example.com/a.png' } }), 403, /files:write/);
  });

  it('counts each endpoint against the budget of its nearest GenGate endpoint (DECISIONS §13)', async () => {
    const { key: k } = await s.account(1);
    const remaining = async (method: string, path: string) =>
      Number((await s.call(method, path, { key: k, body: method === 'POST' ? {} : undefined })).headers.get('ratelimit-remaining'));
    // Write budget: the kie.ai uploads and /api/v1/files/upload (and createTask) share one count.
    const w0 = await remaining('POST', '/api/file-url-upload');
    expect(await remaining('POST', '/api/v1/files/upload')).toBe(w0 - 1);
    expect(await remaining('POST', '/api/file-base64-upload')).toBe(w0 - 2);
    // Read budget: chat/credit and download-url share the count of balance, recordInfo and list.
    const r0 = await remaining('GET', '/api/v1/user/balance');
    expect(await remaining('GET', '/api/v1/chat/credit')).toBe(r0 - 1);
    expect(await remaining('POST', '/api/v1/common/download-url')).toBe(r0 - 2);
    expect(await remaining('POST', '/api/file-stream-upload')).toBe(w0 - 3);
  });

  it('chat/credit answers the balance in USD as a number, with the balance key rules', async () => {
    const r = await s.call('GET', '/api/v1/chat/credit', { key });
    expect(r.status).toBe(200);
    const micros = await s.services.accounts.balanceMicros(accountId);
    expect(r.body).toEqual({ code: 200, msg: 'success', data: micros / 1_000_000 });
    expect(r.body.data).toBe(12.345678);
    const balance = await s.call('GET', '/api/v1/user/balance', { key });
    expect(balance.body.data.balance).toBe('12.3456');
    expect((await s.call('GET', '/api/v1/chat/credit', {})).status).toBe(401);
    expect((await s.call('GET', '/api/v1/chat/credit', { key: 'gg_wrong' })).status).toBe(401);
    const uploader = await s.services.accounts.createKey(accountId, { scopes: ['files:write'] });
    const denied = await s.call('GET', '/api/v1/chat/credit', { key: uploader.apiKey });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 403, data: null });
  });

  it('download-url gives a link to the same bytes for the account own file; 422 for foreign, other accounts and unknown links', async () => {
    const file = await makeClip(tmp('own.mp4'), { seconds: 2 });
    const up = await streamUpload(s, key, file, 'own.mp4', { uploadPath: 'v' });
    const link = up.body.data.downloadUrl as string;
    const r = await s.call('POST', '/api/v1/common/download-url', { key, body: { url: link } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ code: 200, msg: 'success', data: expect.stringMatching(/\/files\/dl\/[A-Za-z0-9_.-]+\/own\.mp4$/) });
    expect(r.body.data.startsWith(s.config.PUBLIC_BASE_URL)).toBe(true);
    expect(r.body.data).not.toContain(new URL(link).pathname.split('/')[2]); // the lasting id is not handed out
    const got = await fetchFile(s, r.body.data);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await got.arrayBuffer()).equals(await readFile(file))).toBe(true);
    const part = await fetchFile(s, r.body.data, { range: 'bytes=0-9' });
    expect(part.status).toBe(206);

    const other = await s.account(1);
    const refused = async (k: string, url: unknown, status = 422) => {
      const res = await s.call('POST', '/api/v1/common/download-url', { key: k, body: { url } });
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body).toMatchObject({ code: status, data: null });
      return res.body.msg as string;
    };
    expect(await refused(other.key, link)).toMatch(/^url must be a file link of this account that has not expired/);
    expect(await refused(key, 'https://example.com/files/abc/own.mp4')).toMatch(/^url must be a file link of this service/);
    expect(await refused(key, `${s.config.PUBLIC_BASE_URL}/files/AAAAAAAAAAAAAAAAAAAAAA/own.mp4`)).toMatch(/of this account/);
    expect(await refused(key, `${s.config.PUBLIC_BASE_URL}/docs`)).toMatch(/of this service/);
    expect(await refused(key, undefined)).toMatch(/^url is required/);
    expect(await refused(key, 42, 400)).toMatch(/^url: /);
    // A tampered or made-up token is no link.
    const token = new URL(r.body.data).pathname.split('/')[3]!;
    const tampered = `${s.url}/files/dl/${token.slice(0, -4)}AAAA/own.mp4`;
    expect((await fetch(tampered)).status).toBe(404);
    const forged = Buffer.from(`${new URL(link).pathname.split('/')[2]}:${Date.now() + 3_600_000}`).toString('base64url');
    expect((await fetch(`${s.url}/files/dl/${forged}/own.mp4`)).status).toBe(404);
    const readOnly = await s.services.accounts.createKey(accountId, { scopes: ['files:write'] });
    expect(await refused(readOnly.apiKey, link, 403)).toMatch(/tasks:read/);
  });

  it('the download link stops working after 20 minutes, and at the latest when the file expires; an expired file has no link', async () => {
    const file = await makeStill(tmp('late.png'));
    const link = (await streamUpload(s, key, file, 'late.png', { uploadPath: 'x' })).body.data.downloadUrl as string;
    const dl = (await s.call('POST', '/api/v1/common/download-url', { key, body: { url: link } })).body.data as string;
    clock.advance(20 * 60_000 - 5_000);
    expect((await fetchFile(s, dl)).status).toBe(200);
    clock.advance(5_001);
    const gone = await fetchFile(s, dl);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: 404, error: 'not_found' });
    expect((await fetchFile(s, link)).status).toBe(200); // the file itself lives on
    // 10 minutes before the file expires: the link works those 10 minutes only.
    clock.advance(24 * 3_600_000 - 30 * 60_000);
    const short = (await s.call('POST', '/api/v1/common/download-url', { key, body: { url: link } })).body.data as string;
    clock.advance(10 * 60_000 - 5_000);
    expect((await fetchFile(s, short)).status).toBe(200);
    clock.advance(5_001);
    expect((await fetchFile(s, short)).status).toBe(404);
    const expired = await s.call('POST', '/api/v1/common/download-url', { key, body: { url: link } });
    expect(expired.status).toBe(422);
    expect(expired.body.msg).toMatch(/has not expired/);
  });
});
