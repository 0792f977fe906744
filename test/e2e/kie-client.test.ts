import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServerOnFreePort, type TestServer } from '../helpers/server.js';
import { makeStill } from '../media/helpers.js';
import { FAST, eventually, expectLedgerInvariant } from '../tasks/support.js';

/**
 * Issue 18: a client written the way kie.ai's clients are written, pointed at GenGate by base URL
 * only. Everything below `kieClient` is what such a client does, with nothing but `fetch`: the
 * envelope's `code`, `JSON.parse(resultJson)` for every model, `data.downloadUrl` of an upload,
 * `chat/credit` as a number, the Suno pair, and a callback handler that checks kie.ai's signature
 * and parses `data.resultJson`. No GenGate-only name appears in the client.
 */

/** kie.ai's envelope. */
type Envelope<T> = { code: number; msg: string; data: T };

/** A kie.ai client: two base URLs (API and upload host), a bearer key. */
function kieClient(apiBase: string, uploadBase: string, apiKey: string) {
  const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
  const call = async <T>(method: string, url: string, body?: unknown): Promise<Envelope<T>> => {
    const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as Envelope<T>;
    if (json.code !== 200) throw new Error(`kie.ai error ${json.code}: ${json.msg}`);
    return json;
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  return {
    credit: async () => (await call<number>('GET', `${apiBase}/api/v1/chat/credit`)).data,
    uploadBase64: async (dataUrl: string, fileName: string) => {
      const res = await fetch(`${uploadBase}/api/file-base64-upload`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ base64Data: dataUrl, uploadPath: 'images/user-uploads', fileName }),
      });
      const json = (await res.json()) as { success: boolean; data: { downloadUrl: string } };
      if (!json.success) throw new Error('upload failed');
      return json.data.downloadUrl;
    },
    uploadStream: async (bytes: Buffer, fileName: string) => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(bytes)]), fileName);
      form.append('uploadPath', 'images');
      form.append('fileName', fileName);
      const res = await fetch(`${uploadBase}/api/file-stream-upload`, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}` }, body: form });
      const json = (await res.json()) as { success: boolean; data: { downloadUrl: string } };
      if (!json.success) throw new Error('upload failed');
      return json.data.downloadUrl;
    },
    createTask: async (model: string, input: Record<string, unknown>, callBackUrl = '') =>
      (await call<{ taskId: string }>('POST', `${apiBase}/api/v1/jobs/createTask`, { model, input, callBackUrl })).data.taskId,
    /** Polls until success or fail; returns the parsed resultJson (kie.ai: always a JSON string). */
    waitForTask: async (taskId: string) => {
      for (let i = 0; i < 400; i++) {
        const { data } = await call<{ state: string; resultJson: string; failMsg: string; costTime: number }>(
          'GET',
          `${apiBase}/api/v1/jobs/recordInfo?taskId=${taskId}`,
        );
        if (data.state === 'success') return JSON.parse(data.resultJson) as { resultUrls: string[] };
        if (data.state === 'fail') throw new Error(`task failed: ${data.failMsg}`);
        await sleep(50);
      }
      throw new Error('timed out');
    },
    downloadUrl: async (url: string) => (await call<string>('POST', `${apiBase}/api/v1/common/download-url`, { url })).data,
    sunoGenerate: async (body: Record<string, unknown>) => (await call<{ taskId: string }>('POST', `${apiBase}/api/v1/generate`, body)).data.taskId,
    sunoWait: async (taskId: string) => {
      for (let i = 0; i < 400; i++) {
        const { data } = await call<{ status: string; response: { sunoData: Array<{ audioUrl: string; title: string }> } }>(
          'GET',
          `${apiBase}/api/v1/generate/record-info?taskId=${taskId}`,
        );
        if (data.status === 'SUCCESS') return data.response.sunoData;
        if (data.status !== 'PENDING' && data.status !== 'TEXT_SUCCESS' && data.status !== 'FIRST_SUCCESS') throw new Error(data.status);
        await sleep(50);
      }
      throw new Error('timed out');
    },
  };
}

/** kie.ai's callback check: X-Webhook-Signature = base64(HMAC-SHA256(key, taskId + "." + X-Webhook-Timestamp)). */
function verifyKieCallback(key: string, body: { taskId: string }, headers: http.IncomingHttpHeaders): boolean {
  const timestamp = String(headers['x-webhook-timestamp'] ?? '');
  const given = Buffer.from(String(headers['x-webhook-signature'] ?? ''), 'base64');
  const expected = createHmac('sha256', key).update(`${body.taskId}.${timestamp}`).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A kie.ai client's callback handler: verifies, then parses `data.resultJson` (or Suno's `data.data`). */
async function startCallbackHandler(key: () => string) {
  const results = new Map<string, unknown>();
  const refused: string[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { code: number; taskId?: string; data: { task_id?: string; resultJson?: string; data?: unknown } };
      const taskId = body.taskId ?? body.data.task_id ?? '';
      if (!verifyKieCallback(key(), { taskId }, req.headers)) {
        refused.push(taskId);
        return void res.writeHead(401).end();
      }
      results.set(taskId, body.data.resultJson !== undefined ? JSON.parse(body.data.resultJson) : body.data.data);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/kie-callback`,
    results,
    refused,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const ADMIN = 'admin-token-for-the-kie-client-e2e';

describe.each(dialects())('a kie.ai client pointed at GenGate on %s', (dialect) => {
  let s: TestServer;
  let handler: Awaited<ReturnType<typeof startCallbackHandler>>;
  let secret = '';
  let scratch = '';
  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'gengate-kie-client-'));
    handler = await startCallbackHandler(() => secret);
    // The links GenGate writes must work as they are: the server's own address is its public one.
    s = await startServerOnFreePort(dialect, { ...FAST, ALLOW_PRIVATE_NETWORK: 'true', ADMIN_TOKEN: ADMIN });
    expect(s.config.PUBLIC_BASE_URL).toBe(s.url);
    s.services.engine.start();
    s.services.callbacks.start();
  });
  afterAll(async () => {
    await s?.close();
    await handler?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('runs its whole flow unchanged: credit, uploads, image, video and Suno tasks, callbacks, download links', async () => {
    const acc = await s.account(20);
    // The operator gave the customer the key and the account's webhook secret (the callback "key" of kie.ai's docs).
    const shown = await s.call('GET', `/admin/v1/accounts/${acc.id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    secret = shown.body.data.webhookSecret;
    expect(secret).toBeTruthy();
    // Both base URLs are GenGate's address: the upload host has no path.
    const kie = kieClient(s.url, s.url, acc.key);

    const before = await kie.credit();
    expect(typeof before).toBe('number');
    expect(before).toBe(20);

    // Uploads as the JS clients do them: a data: URL in base64, and multipart.
    const photo = readFileSync(await makeStill(path.join(scratch, 'photo.jpg'), '640x480'));
    const viaBase64 = await kie.uploadBase64(`data:image/jpeg;base64,${photo.toString('base64')}`, 'photo.jpg');
    const viaStream = await kie.uploadStream(photo, 'photo2.jpg');
    for (const link of [viaBase64, viaStream]) expect((await download(link)).status).toBe(200);

    // An image edit under a kie.ai id with kie.ai's names, "jpg", an empty callBackUrl.
    const edit = await kie.createTask('google/nano-banana-edit', {
      prompt: 'make the sky purple',
      image_urls: [viaBase64, viaStream],
      output_format: 'jpg',
      image_size: '1:1',
      nsfw_checker: false,
    });
    const edited = await kie.waitForTask(edit);
    expect(edited.resultUrls).toHaveLength(1);
    expect((await download(edited.resultUrls[0]!)).type).toMatch(/^image\//);

    // A video under a kie.ai id, called back: the handler parses data.resultJson like the poll does.
    const video = await kie.createTask('bytedance/seedance-2-fast', { prompt: 'a kite over the sea', duration: '5', resolution: '480p' }, handler.url);
    const clip = await kie.waitForTask(video);
    expect(clip.resultUrls).toHaveLength(1);
    const link = await kie.downloadUrl(clip.resultUrls[0]!);
    expect(typeof link).toBe('string');
    expect(await download(link)).toMatchObject({ status: 200, type: 'video/mp4' });
    await eventually(() => handler.results.has(video), 30_000);
    expect(handler.results.get(video)).toMatchObject({ resultUrls: clip.resultUrls });

    // The Suno pair, called back in Suno's shape.
    const song = await kie.sunoGenerate({
      prompt: 'a song about lighthouses',
      customMode: false,
      instrumental: false,
      model: 'V4_5',
      callBackUrl: handler.url,
    });
    const tracks = await kie.sunoWait(song);
    expect(tracks.length).toBeGreaterThan(0);
    for (const t of tracks) expect((await download(t.audioUrl)).type).toMatch(/^audio\//);
    await eventually(() => handler.results.has(song), 30_000);
    expect(handler.refused).toEqual([]);

    // The credit went down by exactly what the ledger charged.
    const after = await kie.credit();
    const ledger = await s.services.database.db.selectFrom('ledger_entries').select('amount_micros').where('account_id', '=', acc.id).execute();
    const balance = ledger.reduce((n, e) => n + Number(e.amount_micros), 0);
    expect(Math.round(after * 1e6)).toBe(balance);
    expect(after).toBeLessThan(before);
    await expectLedgerInvariant(s.services.database);
  }, 120_000);
});

/** Downloads a link to the end (a body left unread keeps its connection, and the server's close, waiting). */
async function download(link: string): Promise<{ status: number; type: string | null; bytes: number }> {
  const res = await fetch(link);
  const bytes = (await res.arrayBuffer()).byteLength;
  return { status: res.status, type: res.headers.get('content-type'), bytes };
}
