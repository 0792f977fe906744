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
  /** Unguessable per-task URL where an upstream may POST its completion notice; absent when PUBLIC_BASE_URL is not reachable from outside. */
  readonly webhookUrl?: string;
}

/** Why generation failed, in backend-neutral words; the lifecycle maps each to failCode and error.type. */
export type FailKind = 'content' | 'safety' | 'rejected' | 'generation' | 'timeout' | 'unavailable' | 'internal';

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
  /** Hands the job over; returns the backend's reference for it. */
  submit(job: BackendJob): Promise<string>;
  progress(job: BackendJob, ref: string): Promise<BackendStatus>;
  /** The files of a done job as local files (downloaded first by remote backends). */
  results(job: BackendJob, ref: string): Promise<BackendOutput>;
  /** Best effort: stop work on a job the lifecycle gave up on. */
  cancel(job: BackendJob, ref: string): Promise<void>;
}
