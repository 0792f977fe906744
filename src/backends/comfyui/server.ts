import { NetError } from '../../net/index.js';
import type { JsonResponse, UpstreamHttp } from '../upstream/index.js';
import { obj, str, transient } from '../upstream/util.js';

/** The jobs a ComfyUI server holds: running and pending prompt ids (`GET /queue`). */
export interface Queue {
  readonly running: readonly string[];
  readonly pending: readonly string[];
}

/** A job's record in `GET /history/{id}`: its status and its outputs by node. */
export interface HistoryEntry {
  readonly status: Record<string, unknown>;
  readonly outputs: Record<string, unknown>;
}

/** How long a load probe may take before the server counts as dead for this submit. */
const PROBE_MS = 5_000;

/** One ComfyUI server of a route: its calls, through the network guard. `label` names it in messages without its address. */
export class ComfyServer {
  constructor(
    readonly url: string,
    readonly label: string,
    private readonly http: UpstreamHttp,
    private readonly headers: Readonly<Record<string, string>>,
  ) {}

  /** `GET /queue`; network trouble throws NetError, an answer that is not a queue throws an Error. */
  async queue(timeoutMs?: number): Promise<Queue> {
    const res = await this.http.json('GET', `${this.url}/queue`, { headers: this.headers, ...(timeoutMs ? { timeoutMs } : {}) });
    const data = obj(res.data);
    if (res.status !== 200 || !Array.isArray(data.queue_running) || !Array.isArray(data.queue_pending))
      throw transient(`${this.label} /queue`, res.status, res.text);
    return { running: ids(data.queue_running), pending: ids(data.queue_pending) };
  }

  /** The load probe of a submit: the queue length, or null when the server does not answer in time. */
  async load(): Promise<Queue | null> {
    return this.queue(PROBE_MS).catch(() => null);
  }

  /** `GET /history/{id}`: the job's record, or null when the server has none (still queued, or unknown). */
  async history(id: string): Promise<HistoryEntry | null> {
    const res = await this.http.json('GET', `${this.url}/history/${encodeURIComponent(id)}`, { headers: this.headers, maxBytes: 50 * 1024 * 1024 });
    if (res.status !== 200 || !res.data || typeof res.data !== 'object') throw transient(`${this.label} /history`, res.status, res.text);
    const entry = (res.data as Record<string, unknown>)[id];
    if (!entry || typeof entry !== 'object') return null;
    const e = entry as Record<string, unknown>;
    return { status: obj(e.status), outputs: obj(e.outputs) };
  }

  /** `POST /prompt` with our prompt id and client id. */
  prompt(graph: Record<string, unknown>, promptId: string, clientId: string): Promise<JsonResponse> {
    return this.http.json('POST', `${this.url}/prompt`, { headers: this.headers, body: { prompt: graph, prompt_id: promptId, client_id: clientId } });
  }

  /** `POST /upload/image` (field `image`, into `input`, replacing a file of the same name); the name a LoadImage node takes. */
  async upload(file: string, name: string, mime: string): Promise<string> {
    const res = await this.http.upload(`${this.url}/upload/image`, file, {
      field: 'image',
      filename: name,
      mime,
      fields: { type: 'input', overwrite: 'true' },
      headers: this.headers,
    });
    const data = obj(res.data);
    const stored = str(data.name);
    if (res.status !== 200 || !stored) throw new UploadRefused(`${this.label} refused the photo upload (HTTP ${res.status}): ${res.text.slice(0, 200)}`);
    const sub = str(data.subfolder);
    return sub ? `${sub}/${stored}` : stored;
  }

  /** `POST /queue {delete: [id]}`: removes a pending job. */
  async deletePending(id: string): Promise<boolean> {
    const res = await this.http.json('POST', `${this.url}/queue`, { headers: this.headers, body: { delete: [id] } });
    return res.status >= 200 && res.status < 300;
  }

  /** `POST /interrupt {prompt_id}`: stops the running job (servers that ignore the id stop whatever runs; we only call it while ours runs). */
  async interrupt(id: string): Promise<boolean> {
    const res = await this.http.json('POST', `${this.url}/interrupt`, { headers: this.headers, body: { prompt_id: id } });
    return res.status >= 200 && res.status < 300;
  }

  /** The `/view` address of an output file. */
  viewUrl(file: { filename: string; subfolder: string; type: string }): string {
    const q = new URLSearchParams({ filename: file.filename, subfolder: file.subfolder, type: file.type });
    return `${this.url}/view?${q.toString()}`;
  }
}

/** A server that answered an upload with a refusal (not a network failure). */
export class UploadRefused extends Error {
  override name = 'UploadRefused';
}

/** The prompt ids of a queue list: each item is `[number, prompt_id, prompt, extra_data, outputs]`. */
function ids(list: unknown[]): string[] {
  return list.map((item) => (Array.isArray(item) ? str(item[1]) : undefined)).filter((x): x is string => !!x);
}

/** True for trouble reaching a server (so another may take the job). */
export function unreachable(e: unknown): boolean {
  return e instanceof NetError;
}
