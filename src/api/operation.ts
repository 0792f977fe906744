import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import type { Principal, Scope } from '../accounts/index.js';
import type { Config } from '../config.js';
import type { ErrorKind } from '../errors.js';
import type { Services } from '../services.js';

/** Tags of the OpenAPI document, one per area. */
export type Tag =
  | 'Tasks'
  | 'Account'
  | 'Auth'
  | 'Catalog'
  | 'Pricing'
  | 'Files'
  | 'MCP'
  | 'OAuth'
  | 'Operations'
  | 'Reference'
  | 'Admin'
  | 'Payments'
  | 'Console'
  | 'kie.ai compatibility';

/** One answer: a zod schema (or a named special), whether it is wrapped in the envelope, its media type. */
export interface Reply {
  description: string;
  /** Status of the main answer; 200 unless given. */
  status?: number;
  schema?: z.ZodType | 'models' | 'any';
  envelope?: boolean;
  type?: string;
  headers?: Record<string, string>;
}

/** The spec of one HTTP operation: what the OpenAPI document says about it. */
export interface Operation {
  method: 'get' | 'post' | 'put' | 'delete';
  /** The path as registered in Fastify (`:param` style). */
  path: string;
  id: string;
  tag: Tag;
  summary: string;
  description?: string;
  /**
   * key: bearer API key (with `scope`), or the session cookie (with x-csrf-token on changes);
   * admin: bearer ADMIN_TOKEN, or an operator's session cookie; metrics: bearer METRICS_TOKEN when
   * set; session: the session cookie gg_session (with x-csrf-token on changes).
   */
  auth?: 'key' | 'admin' | 'metrics' | 'session';
  scope?: Scope;
  /** Served on PRICING_BASE_URL (its own `servers` entry). */
  host?: 'pricing';
  /** Only registered when this holds (admin API needs ADMIN_TOKEN). */
  when?: (config: Config) => boolean;
  query?: z.ZodObject;
  params?: Record<string, string>;
  headers?: Record<string, z.ZodType>;
  /** 'createTask': one schema per model, selected by `model` (built from the catalog). */
  body?: z.ZodType | 'createTask' | 'jsonrpc' | 'upload';
  /** Media type of a zod `body`; application/json unless given. */
  bodyType?: 'multipart/form-data' | 'application/x-www-form-urlencoded';
  ok: Reply;
  /** Envelope errors besides those every operation of its kind has (see document.ts). */
  errors?: ErrorKind[];
  /** Answers that are not envelope errors, by status. */
  extra?: Record<string, Reply>;
}

/** What a keyed call brings, whichever face (REST route, MCP tool) it came through. */
export interface KeyedCall {
  principal: Principal;
  /** Path parameters (`:id`) of a REST route; missing for MCP tools. */
  params?: unknown;
  query: unknown;
  body: unknown;
  headers: IncomingHttpHeaders;
}

/**
 * A success answer: `data` for the envelope, or the whole envelope as JSON text already made (hot
 * reads keep it), or a body that is not JSON with its media type; headers to add.
 */
export type Answer = ({ data: unknown } | { text: string } | { body: string; type: string }) & { headers?: Record<string, string> };

/**
 * An operation served to an API key: its spec and its handler. `handler(services)` is called once
 * when the route is mounted, so a handler may keep what it can reuse (the balance texts).
 */
export interface KeyedOperation {
  spec: Operation & { auth: 'key'; scope: Scope };
  handler(services: Services): (call: KeyedCall) => Promise<Answer>;
}
