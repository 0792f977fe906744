import type { createConnection } from 'node:net';
import WebSocket from 'ws';
import type { UpstreamHttp } from '../upstream/index.js';
import { obj, str } from '../upstream/util.js';

/** What one connection of the socket heard of a prompt. */
export interface PromptNews {
  /** The progress of the node running now, 0–99 (`progress` messages: value / max); null before the first. */
  readonly percent: number | null;
  /** The socket heard the prompt end (`execution_success`, `execution_error`, `execution_interrupted` or `executing` with no node): read `/history`. */
  readonly ended: boolean;
  /** When it last heard of the prompt (ms since the epoch). */
  readonly heardAt: number;
}

/** First wait before connecting again after a drop; it doubles up to RETRY_MAX_MS (a quarter of jitter either way). */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;
/** A ping this often; a connection that did not answer the previous one is cut (a silent half-open connection). */
const PING_MS = 30_000;
const HANDSHAKE_MS = 10_000;
/** Largest frame read (ComfyUI's binary previews are a few hundred KB at most); a larger one cuts the connection. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Prompts remembered at most (oldest forgotten first): only our own prompts are heard of, this is a bound, not a budget. */
const MAX_PROMPTS = 10_000;
/** A prompt not followed for this long is let go (a task lives 20 minutes at most; the engine's cancel or outcome usually lets it go first). */
const FOLLOW_MS = 25 * 60_000;

interface Heard {
  percent: number | null;
  ended: boolean;
  interrupted: boolean;
  heardAt: number;
}

/**
 * ComfyUI's websocket (`GET /ws?clientId=`) of one server, for one route (its client id, sent with
 * every `/prompt`): ComfyUI sends the messages of a prompt to the socket of the client that queued
 * it. Opened when the first prompt is followed, through the network guard with the route's headers;
 * connected again with backoff when it drops while prompts are followed; closed by `close`.
 *
 * What it heard is a hint, never an outcome: per prompt, the latest node progress and whether it
 * ended. A connection that drops forgets everything it heard (messages sent meanwhile are lost, so
 * a prompt is known again only once a new connection hears of it). `onEnd` is told the task id of a
 * followed prompt when ComfyUI reports it finished (`executing` with no node, sent after the record
 * is written to `/history`), except after an interruption: that is a cancel, whose own write comes
 * next, or the operator's doing, which the next poll finds. Binary frames (previews) are ignored.
 */
export class ComfySocket {
  private ws: WebSocket | null = null;
  private connected = false;
  private closed = false;
  /** The guard refused the address: no connection is ever tried. */
  private refused = false;
  private retryMs = RETRY_FIRST_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private answered = false;
  private closing: Promise<void> | null = null;
  /** What the current connection heard, by prompt id. */
  private readonly heard = new Map<string, Heard>();
  /** Followed prompts: their task ids and when they were last followed (most recent last). */
  private readonly followed = new Map<string, { taskId: string; at: number }>();
  /** The prompt executing now (older servers send `progress` without a prompt id). */
  private current: string | null = null;
  /** Connections opened so far. */
  opened = 0;

  constructor(
    private readonly opts: {
      /** The server's address (http or https), as in the route. */
      readonly url: string;
      readonly clientId: string;
      readonly headers: Readonly<Record<string, string>>;
      readonly http: UpstreamHttp;
      readonly onEnd?: (taskId: string) => void;
    },
  ) {}

  /** True while a connection is open. */
  get open(): boolean {
    return this.connected;
  }

  /** Follows a prompt of a task (connecting first when no connection is open or coming). */
  follow(promptId: string, taskId: string): void {
    if (this.closed) return;
    this.followed.delete(promptId);
    if (this.followed.size >= MAX_PROMPTS) this.followed.delete(this.followed.keys().next().value!);
    this.followed.set(promptId, { taskId, at: Date.now() });
    this.connect();
  }

  /** Stops following a prompt (its task has its outcome). */
  forget(promptId: string): void {
    this.followed.delete(promptId);
    this.heard.delete(promptId);
  }

  /** What the open connection heard of a prompt; null when no connection is open or it heard nothing of it. */
  news(promptId: string): PromptNews | null {
    if (!this.connected) return null;
    const h = this.heard.get(promptId);
    return h ? { percent: h.percent, ended: h.ended, heardAt: h.heardAt } : null;
  }

  /** Closes the connection and stops connecting again; resolves when the connection is gone. */
  close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const ws = this.ws;
    if (!ws) return Promise.resolve();
    this.closing ??= new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.terminate();
    });
    return this.closing;
  }

  private connect(): void {
    if (this.ws || this.retryTimer || this.closed || this.refused) return;
    let target: ReturnType<UpstreamHttp['socketTarget']>;
    try {
      target = this.opts.http.socketTarget(`${this.opts.url}/ws?clientId=${encodeURIComponent(this.opts.clientId)}`);
    } catch {
      // The guard refuses this address (HTTP calls to it fail the same way): following stays on HTTP.
      this.refused = true;
      return;
    }
    const ws = new WebSocket(target.url, {
      headers: { ...this.opts.headers },
      handshakeTimeout: HANDSHAKE_MS,
      maxPayload: MAX_FRAME_BYTES,
      perMessageDeflate: false,
      followRedirects: false,
      ...(target.createConnection ? { createConnection: target.createConnection as unknown as typeof createConnection } : {}),
    });
    this.ws = ws;
    this.opened++;
    ws.on('open', () => {
      this.connected = true;
      this.retryMs = RETRY_FIRST_MS;
      this.answered = true;
      this.pingTimer = setInterval(() => this.ping(ws), PING_MS);
      this.pingTimer.unref();
    });
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.read(String(data));
    });
    ws.on('pong', () => (this.answered = true));
    // A refused handshake, a reset, a frame too large: 'close' follows.
    ws.on('error', () => {});
    ws.on('close', () => this.dropped(ws));
  }

  private ping(ws: WebSocket): void {
    if (!this.answered) return void ws.terminate();
    this.answered = false;
    ws.ping();
  }

  private dropped(ws: WebSocket): void {
    if (this.ws !== ws) return;
    this.ws = null;
    this.connected = false;
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
    // What comes while no connection is open is lost: the next connection starts knowing nothing.
    this.heard.clear();
    this.current = null;
    const old = Date.now() - FOLLOW_MS;
    for (const [id, f] of this.followed) {
      if (f.at >= old) break;
      this.followed.delete(id);
    }
    // Nothing followed: the next job followed connects again.
    if (this.closed || this.followed.size === 0) return;
    const wait = this.retryMs * (0.75 + Math.random() / 2);
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, wait);
    this.retryTimer.unref();
  }

  /** One text frame `{type, data}`; anything else is ignored. */
  private read(text: string): void {
    let message: Record<string, unknown>;
    try {
      message = obj(JSON.parse(text));
    } catch {
      return;
    }
    const data = obj(message.data);
    const given = str(data.prompt_id);
    switch (str(message.type)) {
      case 'execution_start':
      case 'execution_cached':
        if (!given) return;
        this.note(given);
        this.current = given;
        return;
      case 'executing': {
        const id = given ?? this.current;
        if (!id) return;
        if (data.node !== null && data.node !== undefined) {
          this.current = id;
          this.note(id);
          return;
        }
        // The prompt is over and its record written: its task is due now (unless it was interrupted).
        const h = this.note(id);
        h.ended = true;
        if (this.current === id) this.current = null;
        const taskId = this.followed.get(id)?.taskId;
        if (taskId && !h.interrupted) this.opts.onEnd?.(taskId);
        return;
      }
      case 'progress': {
        const id = given ?? this.current;
        const value = Number(data.value);
        const max = Number(data.max);
        if (!id || !Number.isFinite(value) || !Number.isFinite(max) || max <= 0) return;
        this.note(id).percent = Math.max(0, Math.min(99, Math.floor((100 * value) / max)));
        return;
      }
      case 'execution_success':
      case 'execution_error':
        if (given) this.note(given).ended = true;
        return;
      case 'execution_interrupted':
        if (given) Object.assign(this.note(given), { ended: true, interrupted: true });
        return;
      default:
        return;
    }
  }

  /** The record of a prompt, made when first heard of; its time of hearing is now. */
  private note(promptId: string): Heard {
    let h = this.heard.get(promptId);
    if (!h) {
      if (this.heard.size >= MAX_PROMPTS) this.heard.delete(this.heard.keys().next().value!);
      h = { percent: null, ended: false, interrupted: false, heardAt: 0 };
      this.heard.set(promptId, h);
    }
    h.heardAt = Date.now();
    return h;
  }
}
