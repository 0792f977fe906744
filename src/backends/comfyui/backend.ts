import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { OUTPUT_OF_KIND } from '../../catalog/index.js';
import type { Files } from '../../files/index.js';
import { NetError } from '../../net/index.js';
import type { KindOptions } from '../registry.js';
import { BackendFailure, type Backend, type BackendJob, type BackendOutput, type BackendStatus, type CancelOutcome, type OutputFile } from '../types.js';
import { NotAccepted, type UpstreamHttp } from '../upstream/index.js';
import { fetchAll, kindFromText, obj, str } from '../upstream/util.js';
import { fetchPhoto, type LocalPhoto } from './photos.js';
import { ComfyServer, UploadRefused, unreachable, type HistoryEntry, type Queue } from './server.js';
import { ComfySocket } from './socket.js';
import { outputFiles } from './outputs.js';
import { Placements } from './placement.js';
import { DEFAULT_FPS, photosWanted, placeholderValues, promptIdOf } from './values.js';
import { fillWorkflow, loadWorkflow, type Workflow } from './workflow.js';

/** A running prompt the socket has not heard of for this long is read over HTTP again (a socket gone quiet cannot hide an end). */
const QUIET_MS = 60_000;

/**
 * The operator's own ComfyUI servers (DECISIONS §19, decision 2101). Submit probes every server's
 * queue, takes the shortest one that answers, uploads the input's photos there (`/upload/image`),
 * and queues the model's workflow with the placeholders filled (`/prompt`, with a prompt id made
 * from the task id). While a job runs, progress comes from the server's websocket (socket.ts) when
 * it is open and has heard of the job: no HTTP call, the node's progress as a percentage. Otherwise,
 * and for every outcome, from `/history/{id}` and `/queue`. Outputs are downloaded from `/view` for
 * re-hosting, and cancel deletes a pending job or interrupts a running one. The reference of a job
 * is `<prompt id>@<server address>`.
 */
export class ComfyBackend implements Backend {
  readonly name: string;
  /** Submitting again is safe: the prompt id comes from the task id and submit first looks for it on every server. */
  readonly idempotentSubmit = true;
  private readonly servers: ComfyServer[];
  /** The websocket of each server, by its address: one per server of the route, opened with the first job followed there. */
  private readonly sockets = new Map<string, ComfySocket>();
  private readonly clientId = randomUUID();
  /** Hand-offs in flight per server, counted in placement (issue 36, decision 2504). */
  private readonly placing = new Placements();
  private readonly fps: number;
  private readonly headers: Readonly<Record<string, string>>;

  constructor(
    private readonly workflow: Workflow,
    private readonly opts: {
      name: string;
      servers: readonly string[];
      fps?: number;
      apiKey?: string;
      http: UpstreamHttp;
      files: Files;
      tmpDir: string;
      /** Told a task's id when its server's websocket reports the job finished: the engine polls the task at once. */
      due?: (taskId: string) => void;
    },
  ) {
    this.name = opts.name;
    this.fps = opts.fps ?? DEFAULT_FPS;
    this.headers = opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {};
    this.servers = opts.servers.map((url, i) => new ComfyServer(url, `ComfyUI server #${i + 1} of ${opts.name}`, opts.http, this.headers));
    for (const server of this.servers) {
      const socket = new ComfySocket({
        url: server.url,
        clientId: this.clientId,
        headers: this.headers,
        http: opts.http,
        ...(opts.due ? { onEnd: opts.due } : {}),
      });
      this.sockets.set(server.url, socket);
    }
  }

  async submit(job: BackendJob): Promise<string> {
    const promptId = promptIdOf(job.taskId);
    const probes = await Promise.all(this.servers.map(async (server, index) => ({ server, index, at: Date.now(), queue: await server.load() })));
    const alive = probes.filter((p): p is { server: ComfyServer; index: number; at: number; queue: Queue } => p.queue !== null);
    // A submit repeated after a crash: the job may already be on a server.
    for (const p of alive) {
      if (p.queue.running.includes(promptId) || p.queue.pending.includes(promptId) || (await p.server.history(promptId).catch(() => null))) {
        this.socketOf(p.server).follow(promptId, job.taskId);
        return refOf(promptId, p.server);
      }
    }
    if (alive.length === 0) throw new NotAccepted(`no ComfyUI server of ${this.name} answers (${this.servers.length} tried)`);
    const values = placeholderValues(job, this.fps);
    const wanted = photosWanted(this.workflow, job);
    const scratch = await mkdtemp(path.join(this.opts.tmpDir, 'comfyui-up-'));
    try {
      const photos = new Map<string, LocalPhoto>();
      for (const [name, link] of wanted) photos.set(name, await fetchPhoto(link, name, job.taskId, scratch, this.opts.files, this.opts.http));
      const tried: string[] = [];
      for (let left = alive; left.length > 0;) {
        // Chosen at the moment of the hand-off, counting the jobs other submits of this process are placing or just placed.
        const { server } = left.reduce((best, p) =>
          this.placing.load(p) < this.placing.load(best) || (this.placing.load(p) === this.placing.load(best) && p.index < best.index) ? p : best,
        );
        left = left.filter((p) => p.server !== server);
        const placing = this.placing.on(server.url);
        placing.set(promptId, null);
        try {
          const ref = await this.queueOn(server, job, promptId, values, photos);
          placing.set(promptId, Date.now());
          return ref;
        } catch (e) {
          placing.delete(promptId);
          if (!(e instanceof NotAccepted) && !unreachable(e) && !(e instanceof UploadRefused)) throw e;
          tried.push(`${server.label}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      throw new NotAccepted(`no ComfyUI server of ${this.name} took the job (${tried.join('; ')})`.slice(0, 1000));
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /**
   * The socket's news when its open connection heard the job run lately and not end: running, with
   * the node's progress, without an HTTP call. Otherwise `/history/{id}` (the outcome: the socket
   * never decides one), then `/queue`.
   */
  async progress(job: BackendJob, ref: string): Promise<BackendStatus> {
    const { id, server } = this.parse(ref);
    const socket = this.socketOf(server);
    socket.follow(id, job.taskId);
    const news = socket.news(id);
    if (news && !news.ended && Date.now() - news.heardAt < QUIET_MS) return running(news.percent);
    const entry = await server.history(id);
    if (entry) return this.outcome(socket, id, statusOf(entry, server));
    const queue = await server.queue();
    if (queue.running.includes(id)) return running(socket.news(id)?.percent ?? null);
    if (queue.pending.includes(id)) return { state: 'queued' };
    // It may have finished between the two reads.
    const again = await server.history(id);
    if (again) return this.outcome(socket, id, statusOf(again, server));
    socket.forget(id);
    return { state: 'failed', kind: 'unavailable', message: `${server.label} no longer knows the job (the server restarted?)` };
  }

  async results(job: BackendJob, ref: string): Promise<BackendOutput> {
    const { id, server } = this.parse(ref);
    const entry = await server.history(id);
    if (!entry) throw new Error(`${server.label} has no record of the job`);
    const files = outputFiles(entry, OUTPUT_OF_KIND[job.kind].media);
    if (files.length === 0) throw new BackendFailure('generation', `the ComfyUI workflow finished without a ${job.kind} file among its outputs`);
    const wanted = files.slice(0, OUTPUT_OF_KIND[job.kind].files);
    const out: OutputFile[] = await fetchAll(
      this.opts.http,
      wanted.map((f, i) => ({ url: server.viewUrl(f), label: `${job.taskId}-${i + 1}`, mime: OUTPUT_OF_KIND[job.kind].mime })),
      this.opts.tmpDir,
      this.headers,
    );
    return { files: out };
  }

  /**
   * A pending job is deleted from the queue (`POST /queue {delete}`); a running one is interrupted
   * (`POST /interrupt`) once it is seen running; a job that ended in an error or interruption, or
   * that the server no longer knows, is stopped; one that succeeded cannot be cancelled.
   */
  async cancel(_job: BackendJob, ref: string): Promise<CancelOutcome> {
    try {
      const { id, server } = this.parse(ref);
      // A job that runs on after the cancel is followed again by the next progress.
      this.socketOf(server).forget(id);
      for (let round = 0; round < 2; round++) {
        const entry = await server.history(id);
        if (entry) return str(entry.status.status_str) === 'error' ? 'cancelled' : 'not-cancellable';
        const queue = await server.queue();
        if (queue.pending.includes(id)) {
          if (!(await server.deletePending(id))) return 'unknown';
          continue; // read again: it may have started meanwhile
        }
        if (queue.running.includes(id)) return (await server.interrupt(id)) ? 'cancelled' : 'unknown';
        if (!(await server.history(id))) return 'cancelled';
      }
      return 'unknown';
    } catch {
      return 'unknown';
    }
  }

  /** Uploads the photos to `server` and queues the filled workflow there. */
  private async queueOn(
    server: ComfyServer,
    job: BackendJob,
    promptId: string,
    values: Record<string, string | number>,
    photos: ReadonlyMap<string, LocalPhoto>,
  ): Promise<string> {
    const filled: Record<string, string | number> = { ...values };
    for (const [name, photo] of photos) filled[name] = await server.upload(photo.path, photo.name, photo.mime);
    // Connecting now, while the graph is sent, so the socket is there when the job starts.
    this.socketOf(server).follow(promptId, job.taskId);
    let res;
    try {
      res = await server.prompt(fillWorkflow(this.workflow, filled), promptId, this.clientId);
    } catch (e) {
      // The server may have queued it before the trouble: not tried elsewhere now. The engine submits
      // again (safe), and the next submit finds the job by its prompt id if this server has it.
      if (e instanceof NetError) throw new Error(`${server.label} /prompt: ${e.message}`, { cause: e });
      throw e;
    }
    const data = obj(res.data);
    if (res.status === 200 && str(data.prompt_id)) return refOf(str(data.prompt_id)!, server);
    // ComfyUI refuses a graph it cannot run (a missing model file or node on this server): the client's
    // input was validated by GenGate, so this is the route's trouble and another server may run it.
    this.socketOf(server).forget(promptId);
    const why = data.error ? JSON.stringify({ error: data.error, node_errors: data.node_errors }).slice(0, 500) : res.text.slice(0, 300);
    throw new NotAccepted(`${server.label} answered /prompt with HTTP ${res.status}: ${why}`);
  }

  /** Closes the servers' websockets (at shutdown). */
  async close(): Promise<void> {
    await Promise.all([...this.sockets.values()].map((s) => s.close()));
  }

  /** True while the websocket of the server at `url` is open (tests). */
  socketOpen(url: string): boolean {
    return this.sockets.get(url)?.open ?? false;
  }

  /** A job's outcome read from `/history`: its prompt is no longer followed once it is done or failed. */
  private outcome(socket: ComfySocket, id: string, status: BackendStatus): BackendStatus {
    if (status.state === 'done' || status.state === 'failed') socket.forget(id);
    return status;
  }

  private socketOf(server: ComfyServer): ComfySocket {
    return this.sockets.get(server.url)!;
  }

  /** The server and prompt id of a reference; a server no longer in the route is a definite failure (its address is not trusted). */
  private parse(ref: string): { id: string; server: ComfyServer } {
    const at = ref.indexOf('@');
    const id = ref.slice(0, at);
    const server = this.servers.find((s) => s.url === ref.slice(at + 1));
    if (at <= 0 || !server) throw new BackendFailure('unavailable', `the ComfyUI server that took the job is no longer a server of ${this.name}`);
    return { id, server };
  }
}

function refOf(promptId: string, server: ComfyServer): string {
  return `${promptId}@${server.url}`;
}

/** Running, with the node's progress when the socket heard one. */
function running(percent: number | null): BackendStatus {
  return percent === null ? { state: 'running' } : { state: 'running', progress: percent };
}

/** A finished job's record as a status: success, or failed with the node's exception or the interruption. */
function statusOf(entry: HistoryEntry, server: ComfyServer): BackendStatus {
  const s = entry.status;
  const messages = Array.isArray(s.messages) ? (s.messages as unknown[]) : [];
  const message = (type: string) => obj((messages.find((m) => Array.isArray(m) && m[0] === type) as unknown[] | undefined)?.[1]);
  if (str(s.status_str) === 'error') {
    const err = message('execution_error');
    if (Object.keys(err).length === 0 && Object.keys(message('execution_interrupted')).length > 0) {
      return { state: 'failed', kind: 'unavailable', message: `the job was interrupted on ${server.label}` };
    }
    const what = [str(err.node_type), str(err.exception_type), str(err.exception_message)].filter(Boolean).join(': ') || 'no reason given';
    return { state: 'failed', kind: kindFromText(what, 'generation'), message: `the ComfyUI workflow failed: ${what}`.slice(0, 500) };
  }
  if (s.completed === true || str(s.status_str) === 'success' || (Object.keys(s).length === 0 && Object.keys(entry.outputs).length > 0))
    return { state: 'done' };
  return { state: 'running' };
}

/** The factory the route registry uses: reads and checks the workflow file at start. */
export function createComfyBackend(opts: KindOptions): Backend {
  const { route } = opts;
  const workflow = loadWorkflow(route.workflow ?? '', opts.baseDir, opts.modelDef, opts.at);
  return new ComfyBackend(workflow, {
    name: opts.name,
    servers: route.servers ?? [opts.baseUrl],
    ...(route.fps ? { fps: route.fps } : {}),
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    http: opts.http,
    files: opts.files,
    tmpDir: opts.tmpDir,
    ...(opts.due ? { due: opts.due } : {}),
  });
}
