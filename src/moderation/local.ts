import type { ImageClassifier } from './images.js';
import type { TextMatcher } from './text.js';
import { ModerationBusy, ModerationUnavailable, type ModerationRequest, type Moderator, type Verdict } from './types.js';

/** Fetches a photo's bytes (through the network guard, or from GenGate's own files). */
export type PhotoLoader = (url: string) => Promise<Buffer>;

export interface LocalModeratorOptions {
  /** Porn + hentai probability at or above which a photo is rejected. */
  threshold: number;
  /** When the classifier cannot run: false = refuse the request (fail closed), true = check the text only. */
  failOpen: boolean;
}

/** The default Moderator: the text matcher on every text, the image classifier on every photo; no network except fetching the photos. */
export class LocalModerator implements Moderator {
  constructor(
    private readonly text: TextMatcher,
    private readonly images: ImageClassifier | null,
    private readonly loadPhoto: PhotoLoader,
    private readonly options: LocalModeratorOptions,
  ) {}

  async check(request: ModerationRequest): Promise<Verdict> {
    for (const [field, text] of request.texts) {
      if (this.text.rejects(text)) return { ok: false, reason: `${field} was rejected by the content check` };
    }
    if (!this.images || request.photos.length === 0) return { ok: true };
    // One account's share of the photo check: past it the request is refused at once, before any fetch.
    const release = this.images.admit?.(request.accountId ?? '');
    try {
      return await this.checkPhotos(this.images, request);
    } finally {
      release?.();
    }
  }

  private async checkPhotos(images: ImageClassifier, request: ModerationRequest): Promise<Verdict> {
    for (const [field, url] of request.photos) {
      let bytes: Buffer;
      try {
        bytes = await this.loadPhoto(url);
      } catch (e) {
        const why = e instanceof Error ? e.message : String(e);
        throw new ModerationUnavailable(`${field} could not be downloaded for the content check: ${why}`, true);
      }
      let score: number;
      try {
        score = await images.score(bytes, request.accountId);
      } catch (e) {
        // A full queue is not a broken classifier: failing open here would let a flood skip the check.
        if (e instanceof ModerationBusy) throw e;
        if (e instanceof ModerationUnavailable && e.clientFault) throw new ModerationUnavailable(`${field} ${e.message}`, true);
        if (this.options.failOpen) continue;
        throw e instanceof ModerationUnavailable ? e : new ModerationUnavailable(`the image classifier failed (${(e as Error).message})`, false);
      }
      if (score >= this.options.threshold) return { ok: false, reason: `${field} was rejected by the content check` };
    }
    return { ok: true };
  }
}
