import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * A ComfyUI server double on 127.0.0.1 (port 0), speaking ComfyUI's HTTP API: `POST /prompt {prompt,
 * prompt_id?, client_id}` → `{prompt_id, number, node_errors}` (400 `{error, node_errors}` for a graph it
 * cannot run), `GET /queue`, `POST /queue {delete}`, `GET /history/{id}`, `POST /upload/image`
 * (multipart, field `image`), `GET /view?filename&subfolder&type`, `POST /interrupt`. It checks what
 * GenGate must get right: no `{{placeholder}}` left anywhere in the graph, numbers where the workflow
 * wants numbers (`width`, `height`, `seed`, `length`, `fps` inputs), every LoadImage naming a photo
 * uploaded before. Each look at a job's history moves it on: pending, running, done.
 *
 * `GET /ws?clientId=` is ComfyUI's websocket (unless `socket: false`, a proxy that does not pass
 * websockets: 404): a `status` frame on connect, then the messages of the jobs queued with that
 * client id. A job that starts while its client's socket is open runs on its own, a step every
 * `tickMs` (looks at its history no longer move it, as on a real server): `execution_start`,
 * `execution_cached`, `executing` its sampler node, `progress` 1/4 to 4/4 (a binary preview frame
 * after the first), `executed` and `execution_success`, then, one step later, its history record
 * and `executing` with no node (ComfyUI writes the record between the two). The messages of a job
 * whose client has no open socket are lost, as on ComfyUI; the job runs on.
 * Markers in the graph's text: `[fail]` (an execution error, out of memory, after progress 2/4),
 * `[hang]` (runs forever, at progress 1/4 when it runs on its own), `[die]` (the server stops
 * answering once the job runs, after progress 1/4 when it runs on its own), `[nothing]` (finishes
 * without an output file), `[stepwise]` (runs on its own only when the test calls `step`).
 */
export interface ComfyFakeOptions {
  /** Files served by /view: the image and the video the fake "renders". */
  readonly image: string;
  readonly video: string;
  /** Jobs of others waiting on this server (its load), as pending queue entries. */
  readonly load?: number;
  /** A token a proxy in front of ComfyUI would require (`Authorization: Bearer`). */
  readonly token?: string;
  /** false: `/ws` is not served (404), like a proxy that does not pass websockets; default true. */
  readonly socket?: boolean;
  /** How often a job running on its own takes a step; default 15 ms. */
  readonly tickMs?: number;
}

interface Job {
  id: string;
  graph: Record<string, unknown>;
  text: string;
  state: 'pending' | 'running' | 'success' | 'error';
  looks: number;
  interrupted?: boolean;
  clientId?: string;
  /** It started while its client's socket was open: it runs on its own (ticks), sending its messages. */
  live?: boolean;
  /** Steps taken since it started (live jobs). */
  steps: number;
}

/** `progress` messages of a live job: value 1 to PROGRESS_MAX of max PROGRESS_MAX. */
const PROGRESS_MAX = 4;
/** A binary preview frame as ComfyUI sends one: event type 1 (preview image), format 2 (PNG), then the image bytes. */
const PREVIEW = Buffer.concat([Buffer.from([0, 0, 0, 1, 0, 0, 0, 2]), Buffer.from('89504e470d0a1a0a', 'hex')]);

const NUMBER_INPUTS = new Set(['width', 'height', 'seed', 'noise_seed', 'length', 'fps', 'frame_rate', 'batch_size']);

export async function startComfyFake(options: ComfyFakeOptions) {
  const jobs = new Map<string, Job>();
  const order: string[] = [];
  const uploads = new Map<string, { bytes: number; type: string }>();
  const calls: { method: string; path: string; body?: unknown }[] = [];
  const others = Array.from({ length: options.load ?? 0 }, () => randomUUID());
  let number = 0;
  let dead = false;
  let base = '';
  /** The open socket of each client id (a new connection with the same id replaces the old one, as on ComfyUI). */
  const sockets = new Map<string, WebSocket>();
  /** Every socket connection: its client id and headers. */
  const connections: { clientId: string; headers: http.IncomingHttpHeaders }[] = [];
  /** Frames sent, by client id (what a client with an open socket was sent). */
  const sent: { clientId: string; type: string; data: unknown }[] = [];
  let acceptSockets = options.socket ?? true;
  const wss = new WebSocketServer({ noServer: true });

  const send = (job: Job, type: string, data: Record<string, unknown>) => {
    const ws = job.clientId ? sockets.get(job.clientId) : undefined;
    if (!ws || ws.readyState !== ws.OPEN) return;
    sent.push({ clientId: job.clientId!, type, data });
    ws.send(JSON.stringify({ type, data: { ...data, prompt_id: job.id } }));
  };
  const running = () => order.map((id) => jobs.get(id)!).find((j) => j.state === 'running');
  /** Starts a pending job; it runs on its own when its client's socket is open now. */
  const start = (job: Job) => {
    job.state = 'running';
    job.live = !!job.clientId && sockets.get(job.clientId)?.readyState === 1;
    if (!job.live) return;
    send(job, 'execution_start', { timestamp: Date.now() });
    send(job, 'execution_cached', { nodes: ['4'], timestamp: Date.now() });
    send(job, 'executing', { node: '3', display_node: '3' });
  };
  /** One step of a live job. */
  const step = (job: Job) => {
    if (job.state !== 'running' || !job.live) return;
    if (job.text.includes('[hang]') && job.steps >= 1) return;
    job.steps++;
    if (job.steps <= PROGRESS_MAX) {
      if (job.text.includes('[fail]') && job.steps === 3) {
        send(job, 'execution_error', {
          node_id: '3',
          node_type: 'KSampler',
          exception_type: 'torch.OutOfMemoryError',
          exception_message: 'Allocation on device failed',
          traceback: [],
          executed: [],
        });
        job.state = 'error';
        send(job, 'executing', { node: null });
        return;
      }
      if (job.text.includes('[die]') && job.steps === 2) return die();
      send(job, 'progress', { value: job.steps, max: PROGRESS_MAX, node: '3' });
      if (job.steps === 1 && job.clientId && sockets.get(job.clientId)?.readyState === 1) sockets.get(job.clientId)!.send(PREVIEW, { binary: true });
      return;
    }
    if (job.steps === PROGRESS_MAX + 1) {
      const [node, output] = Object.entries(outputsOf(job))[0] ?? ['9', {}];
      send(job, 'executing', { node, display_node: node });
      send(job, 'executed', { node, display_node: node, output });
      send(job, 'execution_success', { timestamp: Date.now() });
      return;
    }
    job.state = 'success';
    send(job, 'executing', { node: null });
  };
  const tick = () => {
    if (dead) return;
    const now = running();
    if (now?.live && !now.text.includes('[stepwise]')) step(now);
    if (!running()) {
      const next = order.map((id) => jobs.get(id)!).find((j) => j.state === 'pending' && j.clientId && sockets.get(j.clientId)?.readyState === 1);
      if (next) start(next);
    }
  };
  const ticker = setInterval(tick, options.tickMs ?? 15);
  ticker.unref();
  const advance = (job: Job) => {
    if (job.state === 'success' || job.state === 'error' || job.live) return;
    job.looks++;
    if (job.state === 'pending' && job.looks >= 1 && !running()) start(job);
    else if (job.state === 'running') {
      if (job.text.includes('[die]')) return die();
      if (job.text.includes('[hang]')) return;
      if (job.looks >= 3) job.state = job.text.includes('[fail]') ? 'error' : 'success';
    }
  };
  const history = (job: Job) => {
    const messages: unknown[] = [['execution_start', { prompt_id: job.id, timestamp: 1 }]];
    if (job.interrupted) messages.push(['execution_interrupted', { prompt_id: job.id, node_id: '3', node_type: 'KSampler', executed: [] }]);
    else if (job.state === 'error')
      messages.push([
        'execution_error',
        { prompt_id: job.id, node_id: '3', node_type: 'KSampler', exception_type: 'torch.OutOfMemoryError', exception_message: 'Allocation on device failed' },
      ]);
    else messages.push(['execution_success', { prompt_id: job.id, timestamp: 2 }]);
    return {
      prompt: [0, job.id, job.graph, {}, []],
      outputs: job.state === 'success' ? outputsOf(job) : {},
      status: { status_str: job.state === 'success' ? 'success' : 'error', completed: job.state === 'success', messages },
    };
  };
  const outputsOf = (job: Job) => {
    if (job.text.includes('[nothing]')) return {};
    const out: Record<string, unknown> = {};
    for (const [id, node] of Object.entries(job.graph)) {
      const n = node as { class_type: string };
      if (n.class_type === 'SaveImage')
        out[id] = {
          images: [
            { filename: 'preview_00001_.png', subfolder: '', type: 'temp' },
            { filename: `gengate_${job.id.slice(0, 8)}_00001_.png`, subfolder: '', type: 'output' },
          ],
        };
      if (n.class_type === 'SaveVideo')
        out[id] = { images: [{ filename: `gengate_${job.id.slice(0, 8)}_00001_.mp4`, subfolder: 'video', type: 'output' }], animated: [true] };
    }
    return out;
  };
  /** Why ComfyUI would refuse this graph, else null: left-over placeholders, strings for numbers, photos never uploaded. */
  const refusal = (graph: Record<string, unknown>): string | null => {
    for (const [id, node] of Object.entries(graph)) {
      const n = node as { class_type?: unknown; inputs?: Record<string, unknown> };
      if (typeof n?.class_type !== 'string' || !n.inputs) return `node ${id}: not a node`;
      for (const [k, v] of Object.entries(n.inputs)) {
        if (typeof v === 'string' && v.includes('{{')) return `node ${id} input ${k}: placeholder left: ${v}`;
        if (NUMBER_INPUTS.has(k) && typeof v !== 'number') return `node ${id} input ${k}: expected a number, got ${JSON.stringify(v)}`;
      }
      if (n.class_type === 'LoadImage' && !uploads.has(String(n.inputs.image))) return `node ${id}: Invalid image file: ${String(n.inputs.image)}`;
    }
    return null;
  };

  function handle(method: string, url: URL, raw: Buffer, headers: http.IncomingHttpHeaders): { status: number; json?: unknown; file?: string; mime?: string } {
    if (options.token && headers.authorization !== `Bearer ${options.token}`) return { status: 401, json: { error: 'unauthorized' } };
    const text = raw.toString('latin1');
    let body: unknown;
    try {
      body = text && !String(headers['content-type']).startsWith('multipart/') ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    calls.push({ method, path: url.pathname + url.search, body });
    if (method === 'POST' && url.pathname === '/prompt') {
      const b = (body ?? {}) as { prompt?: Record<string, unknown>; prompt_id?: string; client_id?: string };
      if (!b.prompt || typeof b.prompt !== 'object')
        return { status: 400, json: { error: { type: 'no_prompt', message: 'No prompt provided' }, node_errors: [] } };
      const why = refusal(b.prompt);
      if (why) return { status: 400, json: { error: { type: 'prompt_outputs_failed_validation', message: why }, node_errors: { x: why } } };
      const id = b.prompt_id ?? randomUUID();
      if (!jobs.has(id)) {
        jobs.set(id, {
          id,
          graph: b.prompt,
          text: JSON.stringify(b.prompt),
          state: 'pending',
          looks: 0,
          steps: 0,
          ...(b.client_id ? { clientId: b.client_id } : {}),
        });
        order.push(id);
      }
      return { status: 200, json: { prompt_id: id, number: number++, node_errors: {} } };
    }
    if (method === 'GET' && url.pathname === '/queue') {
      const entry = (j: Job) => [0, j.id, j.graph, { client_id: j.clientId }, []];
      const all = order.map((id) => jobs.get(id)!);
      return {
        status: 200,
        json: {
          queue_running: all.filter((j) => j.state === 'running').map(entry),
          queue_pending: [...others.map((id) => [0, id, {}, {}, []]), ...all.filter((j) => j.state === 'pending').map(entry)],
        },
      };
    }
    if (method === 'POST' && url.pathname === '/queue') {
      for (const id of ((body as { delete?: string[] })?.delete ?? []) as string[]) {
        const j = jobs.get(id);
        if (j?.state === 'pending') {
          jobs.delete(id);
          order.splice(order.indexOf(id), 1);
        }
      }
      return { status: 200 };
    }
    if (method === 'POST' && url.pathname === '/interrupt') {
      const want = (body as { prompt_id?: string } | undefined)?.prompt_id;
      const j = running();
      if (j && (!want || want === j.id)) {
        Object.assign(j, { state: 'error', interrupted: true });
        send(j, 'execution_interrupted', { node_id: '3', node_type: 'KSampler', executed: [] });
        send(j, 'executing', { node: null });
      }
      return { status: 200 };
    }
    const h = /^\/history\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && h) {
      const job = jobs.get(decodeURIComponent(h[1]!));
      if (!job) return { status: 200, json: {} };
      advance(job);
      if (dead) return { status: 599 };
      return { status: 200, json: job.state === 'success' || job.state === 'error' ? { [job.id]: history(job) } : {} };
    }
    if (method === 'POST' && url.pathname === '/upload/image') {
      const form = multipart(raw, String(headers['content-type']));
      const file = form.find((p) => p.name === 'image' && p.filename);
      if (!file) return { status: 400, json: { error: 'no image' } };
      const type = form.find((p) => p.name === 'type')?.data.toString() ?? 'input';
      uploads.set(file.filename!, { bytes: file.data.length, type });
      return { status: 200, json: { name: file.filename, subfolder: '', type } };
    }
    if (method === 'GET' && url.pathname === '/view') {
      const name = url.searchParams.get('filename') ?? '';
      const type = url.searchParams.get('type');
      const known = [...jobs.values()].some((j) => j.state === 'success' && JSON.stringify(outputsOf(j)).includes(name));
      if (!known || type !== 'output') return { status: 404, json: { error: 'not found' } };
      return name.endsWith('.mp4') ? { status: 200, file: options.video, mime: 'video/mp4' } : { status: 200, file: options.image, mime: 'image/png' };
    }
    return { status: 404, json: { error: 'not found' } };
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (dead) return res.destroy();
      const answer = handle(req.method ?? '', new URL(req.url ?? '/', base), Buffer.concat(chunks), req.headers);
      if (answer.status === 599 || dead) return res.destroy();
      if (answer.file) {
        const file = answer.file;
        void stat(file).then((s) => {
          res.writeHead(200, { 'content-type': answer.mime ?? 'application/octet-stream', 'content-length': String(s.size) });
          createReadStream(file).pipe(res);
        });
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.json === undefined ? '' : JSON.stringify(answer.json));
    });
  });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', base);
    const refuse = (status: number) => {
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    };
    if (dead) return socket.destroy();
    if (url.pathname !== '/ws' || !acceptSockets) return refuse(404);
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) return refuse(401);
    const clientId = url.searchParams.get('clientId') ?? randomUUID().replace(/-/g, '');
    wss.handleUpgrade(req, socket, head, (ws) => {
      connections.push({ clientId, headers: req.headers });
      sockets.get(clientId)?.terminate();
      sockets.set(clientId, ws);
      ws.on('close', () => {
        if (sockets.get(clientId) === ws) sockets.delete(clientId);
      });
      const waiting = order.filter((id) => jobs.get(id)!.state === 'pending' || jobs.get(id)!.state === 'running').length + others.length;
      ws.send(JSON.stringify({ type: 'status', data: { status: { exec_info: { queue_remaining: waiting } }, sid: clientId } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  let closed: Promise<void> | null = null;
  /** The server stops: open connections are cut and new ones refused. */
  function die(): void {
    dead = true;
    clearInterval(ticker);
    dropSockets();
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
  /** Cuts every open socket (the server goes on). */
  function dropSockets(): void {
    for (const ws of sockets.values()) ws.terminate();
    sockets.clear();
  }
  return {
    url: base,
    calls,
    jobs,
    uploads,
    /** Jobs GenGate queued here (others' load excluded). */
    queued: () => order.map((id) => jobs.get(id)!),
    die,
    /** Socket connections so far, and the frames sent to open sockets. */
    connections,
    sent,
    /** Open sockets now (of one client id when given). */
    clients: (clientId?: string) => (clientId === undefined ? sockets.size : sockets.has(clientId) ? 1 : 0),
    /** The client id a job was queued with. */
    clientOf: (id: string) => jobs.get(id)?.clientId,
    /** Cuts the open sockets; with `refuse`, new ones are refused (404) until `acceptSockets()`. */
    dropSockets: (refuse = false) => {
      if (refuse) acceptSockets = false;
      dropSockets();
    },
    acceptSockets: () => {
      acceptSockets = true;
    },
    /** One step of a `[stepwise]` job (or any live job). */
    step: (id: string) => step(jobs.get(id)!),
    close: async () => {
      die();
      await closed;
    },
  };
}

/** The parts of a multipart/form-data body (enough for ComfyUI's upload form). */
function multipart(raw: Buffer, contentType: string): { name: string; filename?: string; data: Buffer }[] {
  const boundary = /boundary=(.+)$/.exec(contentType)?.[1];
  if (!boundary) return [];
  const sep = Buffer.from(`--${boundary}`);
  const parts: { name: string; filename?: string; data: Buffer }[] = [];
  let at = raw.indexOf(sep);
  while (at >= 0) {
    const next = raw.indexOf(sep, at + sep.length);
    if (next < 0) break;
    const part = raw.subarray(at + sep.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString();
    const name = /name="([^"]*)"/.exec(head)?.[1] ?? '';
    const filename = /filename="([^"]*)"/.exec(head)?.[1];
    parts.push({ name, ...(filename ? { filename } : {}), data: part.subarray(split + 4) });
    at = next;
  }
  return parts;
}
