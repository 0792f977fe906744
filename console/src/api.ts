// The one door to the server: the API's own endpoints with the session cookie, and the CSRF token
// (from GET /api/v1/auth/session) on every change. Nothing here is console-only: see docs/console.md.
// The API's answers are typed by the TypeScript SDK's own types (packages/client/src/types.ts):
// type-only imports, erased from the bundle, so the console and the SDK cannot drift apart.
import type { Price as PriceResult, UploadedFile } from '../../packages/client/src/types.js';

export type { CallbackStatus, Task, TaskPage, TaskState, UploadedFile } from '../../packages/client/src/types.js';

export interface Session {
  sessionId: string;
  account: { id: string; name: string };
  member: { id: string; email: string; role: 'owner' | 'member' | 'operator' } | null;
  role: 'owner' | 'member' | 'operator' | null;
  scopes: string[] | null;
  readOnly: boolean;
  csrfToken: string;
  expiresAt: string;
  apiKey?: string;
}

/** A refusal of the server, with its status and its own words (`msg`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** What the server put into the page: the sign-up mode, whether mail (password reset) works, the top-up page. */
export interface Settings {
  signup: 'off' | 'invite' | 'open';
  mail: boolean;
  topUpUrl: string;
  version: string;
  /** Card top-ups (decision 1904): whether Stripe is on, and the amounts in micro-USD. */
  topups: { enabled: boolean; presets: number[]; min: number; max: number };
}

export function settings(): Settings {
  const meta = document.querySelector('meta[name="gengate-settings"]')?.getAttribute('content') ?? '{}';
  const raw = JSON.parse(meta) as Partial<Settings>;
  return {
    signup: raw.signup ?? 'off',
    mail: raw.mail ?? false,
    topUpUrl: raw.topUpUrl ?? '/topup',
    version: raw.version ?? '',
    topups: raw.topups ?? { enabled: false, presets: [], min: 0, max: 0 },
  };
}

let csrf = '';
let onSignedOut: (msg: string) => void = () => {};

export function setCsrf(token: string): void {
  csrf = token;
}

/** Called with the server's words when a request finds the session gone (401): the app goes to sign-in. */
export function whenSignedOut(fn: (msg: string) => void): void {
  onSignedOut = fn;
}

function messageOf(body: unknown, status: number): string {
  if (body && typeof body === 'object') {
    const b = body as { msg?: unknown; message?: unknown; error?: { message?: unknown } | unknown };
    if (typeof b.msg === 'string') return b.msg;
    if (typeof b.message === 'string') return b.message;
    if (b.error && typeof b.error === 'object' && typeof (b.error as { message?: unknown }).message === 'string')
      return (b.error as { message: string }).message;
  }
  return `the server answered ${status}`;
}

/** Calls an enveloped API endpoint and returns its `data`; throws ApiError with the server's `msg`. */
export async function api<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, opts: { quiet401?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'the server cannot be reached; check the connection and try again');
  }
  let json: unknown = null;
  try {
    json = await res.json();
  } catch {
    /* not JSON */
  }
  const env = json as { code?: number; data?: unknown } | null;
  if (!res.ok || (env && typeof env.code === 'number' && env.code !== 200)) {
    const status = res.ok && env?.code ? env.code : res.status;
    const msg = messageOf(json, status);
    if (status === 401 && !opts.quiet401) onSignedOut(msg);
    throw new ApiError(status, msg, env?.data);
  }
  return (env?.data ?? json) as T;
}

/** POST /api/v1/files/upload with progress (XMLHttpRequest: fetch reports no upload progress). */
export function upload(file: File, progress: (fraction: number) => void): Promise<UploadedFile> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/v1/files/upload');
    xhr.setRequestHeader('x-csrf-token', csrf);
    xhr.responseType = 'json';
    xhr.upload.onprogress = (e) => e.lengthComputable && progress(e.loaded / e.total);
    xhr.onerror = () => reject(new ApiError(0, 'the upload was interrupted; try again'));
    xhr.onload = () => {
      const body = xhr.response as { code?: number; data?: UploadedFile } | null;
      if (xhr.status === 200 && body?.data) return resolve(body.data);
      if (xhr.status === 401) onSignedOut(messageOf(body, 401));
      reject(new ApiError(xhr.status, messageOf(body, xhr.status)));
    };
    const form = new FormData();
    form.append('file', file);
    xhr.send(form);
  });
}

export interface ModelEntry {
  id: string;
  aliases: string[];
  kind: 'image' | 'video' | 'music';
  title: string;
  description: string;
  enabled: boolean;
  parameters: JsonSchema;
  pricing: { unit: string; display: string; rules: string[] };
}

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  maxLength?: number;
}

/** The calculator's answer: the SDK's Price, or its refusal (400 `{ok: false, error}`). */
export type Price = PriceResult | { ok: false; error: { message: string; field: string | null } };

/** GET /v1/pricing/calculate (no envelope): the price createTask would charge. */
export async function calculate(params: URLSearchParams): Promise<Price> {
  const res = await fetch(`/v1/pricing/calculate?${params}`, { headers: { accept: 'application/json' } });
  return (await res.json()) as Price;
}

/** The models, read once per page load (GET /api/v1/models). */
let models: Promise<ModelEntry[]> | null = null;
export function loadModels(fresh = false): Promise<ModelEntry[]> {
  if (!models || fresh) models = api<ModelEntry[]>('GET', '/api/v1/models');
  models.catch(() => (models = null));
  return models;
}
