import { readFile } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startFileHost } from '../fakes/file-host.js';
import { makeClip, makeStill, makeTone } from '../media/helpers.js';
import { FAST } from '../tasks/support.js';

/** An agent's whole path over MCP with the SDK's client: upload (link and base64) → create_task → wait with progress → results as content. */

type Content = { type: string; text?: string; data?: string; mimeType?: string; uri?: string; name?: string; size?: number };

async function connect(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'gengate-agent-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}, onprogress?: (p: { progress: number }) => void) {
  const r = (await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress, timeout: 120_000 } : { timeout: 120_000 })) as {
    isError?: boolean;
    structuredContent?: any;
    content: Content[];
  };
  return { error: r.isError === true, data: r.structuredContent, text: r.content[0]!.text!, content: r.content };
}

/** One JSON-RPC POST to /mcp with the given Accept header. */
async function rpc(s: TestServer, key: string, accept: string | undefined, body: unknown) {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  if (accept !== undefined) headers.accept = accept;
  const r = await fetch(`${s.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text() };
}

for (const dialect of dialects()) {
  describe(`MCP for agents (${dialect})`, () => {
    let s: TestServer;
    let host: Awaited<ReturnType<typeof startFileHost>>;
    let dir: string;
    let agent: Client;
    let accountId: string;
    let agentKey: string;
    const files: Record<string, string> = {};

    beforeAll(async () => {
      // The local backend's images are about 1.3 MB: above the default inline limit (1 MiB).
      s = await startServer(dialect, { ...FAST, ALLOW_PRIVATE_NETWORK: 'true', MCP_INLINE_MAX_BYTES: '4000000' });
      s.services.engine.start();
      host = await startFileHost();
      dir = mkdtempSync(path.join(tmpdir(), 'gengate-mcp-'));
      files.png = await makeStill(path.join(dir, 'photo.png'));
      files.mp4 = await makeClip(path.join(dir, 'clip.mp4'), { seconds: 3 });
      files.mp3 = await makeTone(path.join(dir, 'song.mp3'), 3);
      files.wav = await makeTone(path.join(dir, 'voice.wav'), 2);
      const a = await s.account(20);
      accountId = a.id;
      agentKey = a.key;
      agent = await connect(s.url, a.key);
    }, 60_000);
    afterAll(async () => {
      await agent?.close();
      await host?.close();
      await s?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('upload_file takes a link or base64 (image, video, audio) and returns the link; refusals name the field', async () => {
      const photo = await call(agent, 'upload_file', {
        base64Data: `data:image/png;base64,${(await readFile(files.png!)).toString('base64')}`,
        fileName: 'me.png',
      });
      expect(photo.error, photo.text).toBe(false);
      expect(photo.data).toMatchObject({
        kind: 'image',
        fileName: 'me.png',
        expiresInDays: 1,
        mimeType: 'image/png',
        url: expect.stringMatching(/\/files\/[^/]+\/me\.png$/),
      });
      const clip = await call(agent, 'upload_file', { fileUrl: host.serve('clip.mp4', files.mp4!) });
      expect(clip.data).toMatchObject({ kind: 'video', fileName: 'clip.mp4', seconds: 3, mimeType: 'video/mp4' });
      const song = await call(agent, 'upload_file', { base64Data: (await readFile(files.mp3!)).toString('base64'), fileName: 'song' });
      expect(song.data).toMatchObject({ kind: 'audio', fileName: 'song.mp3', seconds: 3 });
      const voice = await call(agent, 'upload_file', { fileUrl: host.serve('voice.wav', files.wav!) });
      expect(voice.data).toMatchObject({ kind: 'audio', fileName: 'voice.wav', seconds: 2 });
      // The files are the account's uploads, usable in a task input.
      for (const u of [photo, clip, song, voice]) expect(await s.services.files.owned(u.data.url, accountId)).toMatchObject({ name: u.data.fileName });

      expect(await call(agent, 'upload_file', {})).toMatchObject({
        error: true,
        text: 'fileUrl is required; or base64Data: give a link GenGate downloads, or the file as base64',
      });
      expect((await call(agent, 'upload_file', { fileUrl: 'x', base64Data: 'y' })).text).toBe('give one of fileUrl and base64Data, not both');
      const notMedia = await call(agent, 'upload_file', { base64Data: Buffer.from('plain text, not media').toString('base64') });
      const rest = await s.call('POST', '/api/file-base64-upload', {
        key: (await s.account(1)).key,
        body: { base64Data: Buffer.from('plain text, not media').toString('base64') },
      });
      expect(notMedia).toMatchObject({ error: true, text: rest.body.msg, data: { code: 422 } });
      expect((await call(agent, 'upload_file', { fileUrl: `${host.base}/missing.mp4` })).text).toMatch(/^fileUrl could not be downloaded: /);
    });

    it('create_task (compact) → wait_for_task with rising progress → an image as image content', async () => {
      const photo = await call(agent, 'upload_file', { base64Data: (await readFile(files.png!)).toString('base64') });
      const created = await call(agent, 'create_task', { model: 'seedream-flash', input: { prompt: 'the same, at night', image_input: [photo.data.url] } });
      expect(created.error, created.text).toBe(false);
      const seen: number[] = [];
      const waited = await call(agent, 'wait_for_task', { taskId: created.data.taskId, timeoutSeconds: 60 }, (p) => seen.push(p.progress));
      expect(waited.data).toMatchObject({ done: true, task: { state: 'success' } });
      expect(seen.length).toBeGreaterThan(0);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
      const [url] = JSON.parse(waited.data.task.resultJson).resultUrls as string[];
      const image = waited.content.find((c) => c.type === 'image')!;
      expect(image, JSON.stringify(waited.content.map((c) => ({ ...c, data: c.data?.length })))).toBeDefined();
      expect(image.mimeType).toMatch(/^image\//);
      const served = Buffer.from(await (await fetch(url!.replace(s.config.PUBLIC_BASE_URL, s.url))).arrayBuffer());
      expect(Buffer.from(image.data!, 'base64').equals(served)).toBe(true);
      expect(JSON.parse(waited.content[0]!.text!)).toEqual(waited.data);
      // get_task shows the same content.
      expect((await call(agent, 'get_task', { taskId: created.data.taskId })).content.slice(1)).toEqual(waited.content.slice(1));
      // Over the inline limit the same result is a resource link.
      const config = s.services.config as { MCP_INLINE_MAX_BYTES: number };
      const before = config.MCP_INLINE_MAX_BYTES;
      config.MCP_INLINE_MAX_BYTES = 10;
      try {
        const linked = await call(agent, 'get_task', { taskId: created.data.taskId });
        expect(linked.content.slice(1)).toEqual([{ type: 'resource_link', uri: url, name: expect.any(String), mimeType: image.mimeType, size: served.length }]);
      } finally {
        config.MCP_INLINE_MAX_BYTES = before;
      }
    });

    it('music comes as audio content; a video made from uploaded clip and audio comes as a resource link', async () => {
      const song = await call(agent, 'create_task', { model: 'suno-v6', input: { prompt: 'a short tune' } });
      const sung = await call(agent, 'wait_for_task', { taskId: song.data.taskId, timeoutSeconds: 60 });
      expect(sung.data).toMatchObject({ done: true, task: { state: 'success' } });
      const audio = sung.content.filter((c) => c.type === 'audio');
      expect(audio.length).toBe(JSON.parse(sung.data.task.resultJson).resultUrls.length);
      expect(audio[0]!.mimeType).toMatch(/^audio\//);

      const clip = await call(agent, 'upload_file', { fileUrl: host.serve('clip2.mp4', files.mp4!) });
      const voice = await call(agent, 'upload_file', { base64Data: (await readFile(files.mp3!)).toString('base64') });
      const video = await call(agent, 'create_task', {
        model: 'seedance-2.0-fast',
        input: { prompt: 'dance to it', resolution: '480p', duration: '4', video_urls: [clip.data.url], audio_urls: [voice.data.url] },
      });
      expect(video.error, video.text).toBe(false);
      const made = await call(agent, 'wait_for_task', { taskId: video.data.taskId, timeoutSeconds: 120 });
      expect(made.data, JSON.stringify(made.data)).toMatchObject({ done: true, task: { state: 'success' } });
      const links = made.content.slice(1);
      expect(links.length).toBeGreaterThan(0);
      for (const l of links) expect(l).toMatchObject({ type: 'resource_link', mimeType: 'video/mp4', uri: expect.stringContaining('/files/') });
    }, 180_000);

    it('cancel_task cancels a waiting task and refunds it; get_model returns one model', async () => {
      s.services.engine.stop();
      try {
        const created = await call(agent, 'create_task', { model: 'seedream-flash', input: { prompt: 'never mind' } });
        const cancelled = await call(agent, 'cancel_task', { taskId: created.data.taskId });
        expect(cancelled.error, cancelled.text).toBe(false);
        expect(cancelled.data).toMatchObject({ taskId: created.data.taskId, state: 'fail', failCode: 499 });
        const again = await call(agent, 'cancel_task', { taskId: created.data.taskId });
        expect(again).toMatchObject({ error: true, data: { code: 409 } });
      } finally {
        s.services.engine.start();
      }
      const model = await call(agent, 'get_model', { model: 'suno-v6' });
      expect(model.data).toMatchObject({ id: 'suno-v6', kind: 'music', parameters: { type: 'object' } });
      expect(model.data.parameters.properties.prompt).toBeDefined();
    });

    it('a client that accepts only JSON gets JSON (no 406); one that accepts the stream gets the stream', async () => {
      const { key } = await s.account(1);
      const list = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_balance', arguments: {} } };
      for (const accept of ['application/json', undefined, '*/*']) {
        const r = await rpc(s, key, accept, list);
        expect(r.status, `${accept}: ${r.text}`).toBe(200);
        expect(r.type).toMatch(/^application\/json/);
        expect(JSON.parse(r.text)).toMatchObject({ jsonrpc: '2.0', id: 7, result: { structuredContent: { balance: '1.0000', currency: 'USD' } } });
      }
      // A wait with a progress token: the notifications are left out, the answer is still one JSON message.
      const created = await call(agent, 'create_task', { model: 'seedream-flash', input: { prompt: 'json only' } });
      const wait = {
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: { name: 'wait_for_task', arguments: { taskId: created.data.taskId }, _meta: { progressToken: 'p1' } },
      };
      const waited = await rpc(s, agentKey, 'application/json', wait);
      expect(waited.status, waited.text).toBe(200);
      expect(JSON.parse(waited.text)).toMatchObject({ id: 8, result: { structuredContent: { done: true, task: { state: 'success' } } } });
      const stream = await rpc(s, key, 'application/json, text/event-stream', list);
      expect(stream.status).toBe(200);
      expect(stream.type).toMatch(/^text\/event-stream/);
      expect(stream.text).toMatch(/^event: message\ndata: \{.*"balance":"1.0000"/m);
    });
  });
}
