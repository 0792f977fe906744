import type { MediaFacts, ModelKind } from '../catalog/index.js';

/** A validated, priced task as a backend sees it. */
export interface BackendJob {
  readonly taskId: string;
  /** Canonical model id. */
  readonly model: string;
  readonly kind: ModelKind;
  /** The normalised input (a draft final already merged with its draft). */
  readonly input: Readonly<Record<string, unknown>>;
  /** Facts of the supplied media links, trimmed seconds included. */
  readonly media: MediaFacts;
  /**
   * Unguessable per-task URL where an upstream may POST its completion notice; absent when
   * UPSTREAM_WEBHOOKS is off, unless the backend needs one (`Backend.needsCallback`).
   */
  readonly webhookUrl?: string;
  /** The body the client sent (the task's `param`): its `model` and `input` as sent, for adapters that pass a kie.ai field GenGate ignores (decision 0400). */
  readonly sent?: Readonly<Record<string, unknown>>;
}

/**
 * Why generation failed, in backend-neutral words; the lifecycle maps each to failCode and error.type.
 * `cancelled`: the client cancelled the task (POST /jobs/cancel, DECISIONS §22), or an upstream of the same API reports its task cancelled.
 */
export type FailKind = 'content' | 'safety' | 'rejected' | 'generation' | 'timeout' | 'unavailable' | 'internal' | 'cancelled';

/**
 * What a backend's cancel achieved (decision 1901):
 * - `cancelled`: the backend confirmed the job is stopped (or was never started) and will not be billed further;
 * - `not-cancellable`: the backend answered that it cannot cancel this job (already finished, a ModelArk task
 *   that is running, a provider refusal, a route with no cancel at all): the job runs on;
 * - `unknown`: no clear answer (network trouble, an unexpected status, a timeout): it may or may not have stopped.
 */
export type CancelOutcome = 'cancelled' | 'not-cancellable' | 'unknown';

/** A definite failure of a task (not worth retrying), thrown or reported by a backend. */
export class BackendFailure extends Error {
  constructor(
    readonly kind: FailKind,
    message: string,
  ) {
    super(message);
    this.name = 'BackendFailure';
  }
}

/** Where the backend is with a job. `recheckMs`: when a new look is worth it (the engine's poll interval when absent). */
export type BackendStatus =
  | { readonly state: 'queued'; readonly recheckMs?: number }
  | { readonly state: 'running'; readonly progress?: number; readonly recheckMs?: number }
  | { readonly state: 'done' }
  | { readonly state: 'failed'; readonly kind: FailKind; readonly message: string };

/** One result file, as a local file the lifecycle copies into the blob store. */
export interface OutputFile {
  readonly path: string;
  readonly mime: string;
}

/** What a finished job produced. */
export interface BackendOutput {
  readonly files: readonly OutputFile[];
  /** Real length in seconds of a video or the tracks. */
  readonly durationSeconds?: number;
  /** The last frame, when return_last_frame was asked and the backend makes one. */
  readonly lastFrame?: OutputFile;
}

/** The last reading of an upstream account's credit (a kie route, DECISIONS §19). */
export interface CreditReading {
  /** Credits left, in the provider's unit; null before the first good reading. */
  readonly credit: number | null;
  /** The route's `min_credit`; null when it has none. */
  readonly minCredit: number | null;
  /** True when the last reading is below `minCredit`: the route is skipped. */
  readonly low: boolean;
  /** When it was read (ms since the epoch), null before the first good reading. */
  readonly readAt: number | null;
}

/** An upstream account that may stop a route on its own (credit below the route's minimum): checked before each submit. */
export interface UpstreamAccount {
  /** Why the route cannot take a task now (e.g. credit below min_credit), else null; reads the credit again first when the reading is stale. */
  check(): Promise<string | null>;
  /** The last reading, at once; starts a new reading in the background when it is stale. */
  reading(): CreditReading;
}

/**
 * A generation backend (DECISIONS §16). The engine calls submit once per hand-off (again after a
 * crash before the hand-off was recorded, so submit should be idempotent per taskId), then
 * progress until done or failed, then results. Throwing anything but BackendFailure is a
 * transient error: the engine retries with backoff and fails the task after ENGINE_MAX_ATTEMPTS.
 */
export interface Backend {
  readonly name: string;
  /** True when submitting the same taskId twice is safe because the upstream honours an idempotency key. */
  readonly idempotentSubmit?: boolean;
  /**
   * True when the upstream posts to the job's `webhookUrl` once the job ends (kie.ai's callBackUrl,
   * fal's and Replicate's webhooks, BytePlus's callback_url, another GenGate's callBackUrl). With
   * UPSTREAM_WEBHOOKS on, the engine then polls the job only every UPSTREAM_FALLBACK_POLL_MS, as a
   * safety net for a notice that never came (decision 2102).
   */
  readonly notices?: boolean;
  /**
   * True when the upstream refuses this job without a callback address (kie.ai's Suno API: "Please
   * enter callBackUrl"). The engine then gives the job its notify address under PUBLIC_BASE_URL even
   * with UPSTREAM_WEBHOOKS off, and keeps polling as usual (issue 36, decision 2500).
   */
  needsCallback?(job: BackendJob): boolean;
  /** The upstream account behind the route, when its standing (credit) can stop the route. */
  readonly account?: UpstreamAccount;
  /** Hands the job over; returns the backend's reference for it. */
  submit(job: BackendJob): Promise<string>;
  progress(job: BackendJob, ref: string): Promise<BackendStatus>;
  /** The files of a done job as local files (downloaded first by remote backends). */
  results(job: BackendJob, ref: string): Promise<BackendOutput>;
  /**
   * Asks the backend to stop the job `ref` and says what came of it (see CancelOutcome). Called by the
   * engine for a job it gave up on (the outcome is only logged) and by POST /jobs/cancel, which fails
   * and refunds the task only on `cancelled`. Must not throw for an answer of the provider: a refusal is
   * `not-cancellable`, anything unclear is `unknown` (a throw counts as `unknown` too). May be called
   * more than once for one job (a repeated cancel, a cancel racing the engine): a second call on a job
   * already cancelled answers `cancelled` again where the provider says so.
   */
  cancel(job: BackendJob, ref: string): Promise<CancelOutcome>;
  /** Closes what the backend holds open (connections, timers); called once at shutdown, after the engine stopped. */
  close?(): Promise<void>;
}
