import type { UpstreamHttp } from './http.js';

/**
 * Thrown by submit() when the upstream did NOT accept the job and trying again (or the next route) is safe:
 * connection refused/reset, DNS failure, timeout before an answer, 429, 5xx on the create call, and
 * answers that say the route itself is unusable (credentials refused, no credit, unknown model id).
 */
export class NotAccepted extends Error {
  constructor(
    message: string,
    /** The upstream's Retry-After, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'NotAccepted';
  }
}

/** What every provider adapter factory receives. */
export interface UpstreamOptions {
  /** Route name for logs and metrics, e.g. "fal#1". */
  readonly name: string;
  /** Provider API base (overridable so tests point at a fake on loopback). */
  readonly baseUrl: string;
  /** The credential, already read from the setting the route names. */
  readonly apiKey: string;
  /** Provider's model id, endpoint path or version. */
  readonly upstreamModel: string;
  /** Optional per-route input mapping overrides (see docs/backends.md). */
  readonly map?: Readonly<Record<string, unknown>>;
  readonly http: UpstreamHttp;
  /** Where results are downloaded to (the engine re-hosts them). */
  readonly tmpDir: string;
  /** kie routes: kie.ai's upload host, when the route names one. */
  readonly uploadUrl?: string;
  /** kie routes: the credit below which the route is skipped. */
  readonly minCredit?: number;
  /** fal, replicate, kie: send the validated input under the model's own names (the route's `as_is`, decision 3303). */
  readonly asIs?: boolean;
}
