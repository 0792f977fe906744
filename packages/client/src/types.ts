/** Shapes of GenGate's answers (docs/api.md), as the client returns them. */

export type TaskState = 'waiting' | 'queuing' | 'generating' | 'success' | 'fail';

/** The delivery status of a task's callBackUrl. */
export interface CallbackStatus {
  url: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: number | null;
}

/** A task as recordInfo (and jobs/list) shows it. */
export interface Task {
  taskId: string;
  model: string;
  state: TaskState;
  status: 'pending' | 'processing' | 'completed' | 'failed';
  /** The createTask body exactly as sent, as JSON text. */
  param: string;
  /** null until success; a JSON string (images, music, the kie dialect) or an object (video). Use `resultFiles(task)`. */
  resultJson: string | Record<string, unknown> | null;
  lastFrameUrl?: string | null;
  failCode: number | '';
  failMsg: string;
  error: { code: number; message: string; type: string } | null;
  costTime: number | null;
  createTime: number;
  updateTime: number;
  completeTime: number | null;
  progress: number;
  creditsConsumed: number;
  costUsd: string;
  costRub: number;
  refunded: boolean;
  filesExpired: boolean;
  callback: CallbackStatus | null;
  [field: string]: unknown;
}

export type FileKind = 'image' | 'video' | 'audio';

/** One result file: its link (valid 24 hours), its kind by extension and its file name. */
export interface FileLink {
  url: string;
  kind: FileKind;
  name: string;
}

/** What `run` returns: the finished task, its files and what it cost. */
export interface RunResult {
  taskId: string;
  model: string;
  files: FileLink[];
  /** The last frame (`return_last_frame`), when asked for. */
  lastFrame: FileLink | null;
  /** Video: the result's real length in seconds; null for other kinds. */
  duration: number | null;
  /** The price charged, as USD text with 3 decimals ("1.405"). */
  costUsd: string;
  /** The same price in integer micro-USD (1 USD = 1,000,000). */
  costMicros: number;
  costRub: number;
  /** Milliseconds from creation to completion. */
  costTime: number | null;
  task: Task;
}

export interface CreateOptions {
  callBackUrl?: string;
  /** Sent as `Idempotency-Key`; `create` makes one when not given, so its own retries never create (or charge) twice. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface CreatedTask {
  taskId: string;
  status: string;
  /** true when the server answered an earlier request with the same Idempotency-Key (nothing charged again). */
  replayed: boolean;
}

export interface WaitOptions {
  /** Called on every look at the task while it is not final. */
  onProgress?: (task: Task) => void;
  signal?: AbortSignal;
  /** Give up (TimeoutError) after this long; the task runs on. Default 20 minutes (the server's own deadline). */
  timeoutMs?: number;
}

export interface RunOptions extends WaitOptions, Omit<CreateOptions, 'signal'> {}

export interface ListQuery {
  state?: TaskState;
  /** Tasks per page, 1–100 (default 20). */
  limit?: number;
  /** Start after this position (a page's `nextBefore`). */
  before?: number;
}

export interface TaskPage {
  items: Task[];
  /** Pass as `before` for the next page; null on the last. */
  nextBefore: number | null;
}

export interface CancelResult {
  taskId: string;
  state: TaskState;
  status: string;
  failCode: number;
  refunded: boolean;
}

export interface UploadedFile {
  /** The link to put in an input field (video and audio links work only for this account). */
  url: string;
  fileName: string;
  expiresInDays: number;
  kind: FileKind;
  /** Probed length in seconds (0 for photos). */
  duration: number;
  /** Whole seconds, what billing counts. */
  seconds: number;
}

export interface Balance {
  /** USD text with 4 decimals. */
  balance: string;
  currency: string;
  balanceRub: number;
  /** The same balance in integer micro-USD. */
  micros: number;
}

export interface PriceQuery {
  model: string;
  resolution?: string;
  quality?: string;
  duration?: number | string;
  generate_audio?: boolean;
  reference_images?: number;
  reference_video_seconds?: number;
}

export interface Price {
  ok: true;
  model: string;
  unit: 'second' | 'image' | 'run';
  params: Record<string, unknown>;
  billable_seconds: number;
  price_usd: number;
  price_rub: number;
  price_display: string;
}

/** An entry of `/api/v1/models` (the fields the client uses; the rest are kept). */
export interface ModelInfo {
  id: string;
  aliases: string[];
  kind: 'image' | 'video' | 'music';
  title: string;
  enabled: boolean;
  parameters: Record<string, unknown>;
  limits: {
    frames: boolean;
    images?: { field: string; max: number };
    videos?: { field: string; max: number };
    audios?: { field: string; max: number };
  };
  [field: string]: unknown;
}
