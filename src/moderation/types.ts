/** What the content check looks at: the texts of the input and its photo links. */
export interface ModerationRequest {
  /** [field path, text] pairs, e.g. ["input.prompt", "a cat"]. */
  texts: Array<[string, string]>;
  /** [field path, link] pairs of photos. */
  photos: Array<[string, string]>;
  /** The account asking: the photo check shares its capacity per account. */
  accountId?: string;
}

/** The verdict: allowed, or rejected with a reason that names the field (never the matched word list). */
export type Verdict = { ok: true } | { ok: false; reason: string };

/** A content check (DECISIONS §15): local by default; an external moderation service can implement the same. */
export interface Moderator {
  check(request: ModerationRequest): Promise<Verdict>;
}

/** Thrown when a check cannot be made (classifier broken, photo not downloadable); the caller decides how to answer. */
export class ModerationUnavailable extends Error {
  constructor(
    message: string,
    /** True when the input was at fault (a photo that cannot be fetched), false when GenGate was. */
    readonly clientFault: boolean,
  ) {
    super(message);
    this.name = 'ModerationUnavailable';
  }
}

/** Thrown when the account's share of the photo check, or the whole queue, is full: the caller answers 429 with Retry-After. */
export class ModerationBusy extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'ModerationBusy';
  }
}
