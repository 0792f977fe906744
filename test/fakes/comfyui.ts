import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';

/**
 * A ComfyUI server double on 127.0.0.1 (port 0), speaking ComfyUI's HTTP API: `POST /prompt {prompt,
 * prompt_id?, client_id}` → `{prompt_id, number, node_errors}` (400 `{error, node_errors}` for a graph it
 * cannot run), `GET /queue`, `POST /queue {delete}`, `GET /history/{id}`, `POST /upload/image`
 * (multipart, field `image`), `GET /view?filename&subfolder&type`, `POST /interrupt`. It checks what
 * GenGate must get right: no `{{placeholder}}` left anywhere in the graph, numbers where the workflow
 * wants numbers (`width`, `height`, `seed`, `length`, `fps` inputs), every LoadImage naming a photo
 * uploaded before. Each look at a job's history moves it on: pending, running, done.
 * Markers in the graph's text: `[fail]` (an execution error, out of memory), `[hang]` (runs forever),
 * `[die]` (the server stops answering once the job runs), `[nothing]` (finishes without an output file).
 */
export interface ComfyFakeOptions {
  /** Files served by /view: the image and the video the fake "renders". */
  readonly image: string;
  readonly video: string;
  /** Jobs of others waiting on this server (its load), as pending queue entries. */
  readonly load?: number;
  /** A token a proxy in front of ComfyUI would require (`Authorization: Bearer`). */
  readonly token?: string;
}

interface Job {
  id: string;
  graph: Record<string, unknown>;
  text: string;
  state: 'pending' | 'running' | 'success' | 'error';
  looks: number;
  interrupted?: boolean;
  clientId?: string;
}

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

  const running = () => order.map((id) => jobs.get(id)!).find((j) => j.state === 'running');
  const advance = (job: Job) => {
    if (job.state === 'success' || job.state === 'error') return;
    job.looks++;
    if (job.state === 'pending' && job.looks >= 1 && !running()) job.state = 'running';
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
        jobs.set(id, { id, graph: b.prompt, text: JSON.stringify(b.prompt), state: 'pending', looks: 0, ...(b.client_id ? { clientId: b.client_id } : {}) });
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
      if (j && (!want || want === j.id)) Object.assign(j, { state: 'error', interrupted: true });
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  let closed: Promise<void> | null = null;
  /** The server stops: open connections are cut and new ones refused. */
  function die(): void {
    dead = true;
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
  return {
    url: base,
    calls,
    jobs,
    uploads,
    /** Jobs GenGate queued here (others' load excluded). */
    queued: () => order.map((id) => jobs.get(id)!),
    die,
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
