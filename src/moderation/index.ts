import { readFileSync } from 'node:fs';
import type { Config } from '../config.js';
import { AppError, Errors } from '../errors.js';
import { linkName, type Files } from '../files/index.js';
import type { NetGuard } from '../net/index.js';
import { NsfwjsClassifier } from './images.js';
import { LocalModerator, type PhotoLoader } from './local.js';
import { moderationRequest } from './request.js';
import { TextMatcher, wordList } from './text.js';
import type { RateLimits } from '../limits/index.js';
import { ModerationBusy, ModerationUnavailable, type Moderator } from './types.js';

/** The content check (DECISIONS §15): a Moderator interface, the local implementation and the createTask hook. */
export { LocalModerator, type PhotoLoader, type LocalModeratorOptions } from './local.js';
export { NsfwjsClassifier, modelPixels, type ImageClassifier } from './images.js';
export { ClassifierPool, type PoolOptions, type PoolStats } from './pool.js';
export { TextMatcher, wordList } from './text.js';
export { moderationRequest } from './request.js';
export { ModerationBusy, ModerationUnavailable, type Moderator, type ModerationRequest, type Verdict } from './types.js';

/** Photo bytes: GenGate's own file links from the blob store, anything else through the network guard with size and time limits. */
export function photoLoader(guard: NetGuard, files: Files, limits: { maxBytes: number; timeoutMs: number }): PhotoLoader {
  return async (url) => {
    const id = files.linkId(url);
    if (id) {
      const name = linkName(url);
      const file = name === null ? null : await files.open(id, name);
      if (!file) throw new Error('the link is unknown or expired');
      if (file.bytes > limits.maxBytes) throw new Error(`the file is larger than ${limits.maxBytes} bytes`);
      const chunks: Buffer[] = [];
      for await (const chunk of files.blobs.read(file.blobKey)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    }
    const res = await guard.fetch(url, { timeoutMs: limits.timeoutMs, maxBytes: limits.maxBytes, maxRedirects: 3 });
    if (res.status < 200 || res.status > 299) throw new Error(`the server answered HTTP ${res.status}`);
    return res.body;
  };
}

/** Who asks for a check: the account shares the photo check, the key pays a refusal with write-limit points. */
export interface Asker {
  accountId: string;
  keyId: string;
  limits: { write: number | null };
}

/** The createTask hook with the pieces behind it (the classifier's counters for tests and operators, and its shutdown). */
export interface ContentCheck {
  check: (input: Record<string, unknown>, asker: Asker) => Promise<void>;
  classifier: NsfwjsClassifier | null;
  close(): Promise<void>;
}

/** The local Moderator from the settings, its classifier pool, and a refusal charged to the key's write limit. */
export function buildContentCheck(config: Config, guard: NetGuard, files: Files, limits: RateLimits): ContentCheck {
  const fileText = config.MODERATION_WORDS_FILE ? readFileSync(config.MODERATION_WORDS_FILE, 'utf8') : null;
  const classifier =
    config.MODERATION_IMAGES === 'off'
      ? null
      : new NsfwjsClassifier({
          workers: config.MODERATION_WORKERS,
          checksPerAccount: config.MODERATION_CHECKS_PER_ACCOUNT,
          queueMax: config.MODERATION_QUEUE_MAX,
        });
  const moderator = new LocalModerator(
    new TextMatcher(wordList(config.MODERATION_WORDS, fileText)),
    classifier,
    photoLoader(guard, files, { maxBytes: config.MODERATION_FETCH_MAX_BYTES, timeoutMs: config.MODERATION_FETCH_TIMEOUT_MS }),
    { threshold: config.MODERATION_IMAGE_THRESHOLD, failOpen: config.MODERATION_FAIL_OPEN },
  );
  const cost = config.MODERATION_REJECT_COST;
  const penalty = async (asker: Asker) => {
    if (cost > 0) await limits.take('write', asker.keyId, asker.limits.write ?? config.RATE_LIMIT_WRITE, cost);
  };
  return { check: contentCheck(moderator, penalty), classifier, close: async () => classifier?.close() };
}

/**
 * The createTask hook: throws 400 nsfw_content_detected on rejection, 400 for an unusable photo,
 * 429 when the account's share of the photo check or its queue is full, 500 when the check cannot
 * run. A refusal for the content (or for an unusable photo) also uses `penalty` on the key, so a
 * key whose requests are all refused cannot keep the classifier busy for free.
 */
export function contentCheck(
  moderator: Moderator,
  penalty: (asker: Asker) => Promise<void> = async () => {},
): (input: Record<string, unknown>, asker: Asker) => Promise<void> {
  return async (input, asker) => {
    if (input.nsfw_check !== true) return;
    let verdict;
    try {
      verdict = await moderator.check({ ...moderationRequest(input), accountId: asker.accountId });
    } catch (e) {
      if (e instanceof ModerationBusy) {
        throw Errors.rateLimited(`${e.message}; nothing was created or charged; retry in ${e.retryAfterSeconds} s`, e.retryAfterSeconds);
      }
      if (e instanceof ModerationUnavailable && e.clientFault) {
        await penalty(asker);
        throw Errors.invalid(e.message);
      }
      const why = e instanceof ModerationUnavailable ? e.message : 'the content check failed';
      throw new AppError('internal', `${why}; the content check could not run, so nothing was created or charged (retry later, or send nsfw_check false)`);
    }
    if (!verdict.ok) {
      await penalty(asker);
      throw Errors.contentRejected(`${verdict.reason}; no task was created and nothing was charged`);
    }
  };
}
