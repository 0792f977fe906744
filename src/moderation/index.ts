import { readFileSync } from 'node:fs';
import type { Config } from '../config.js';
import { AppError, Errors } from '../errors.js';
import type { Files } from '../files/index.js';
import type { NetGuard } from '../net/index.js';
import { NsfwjsClassifier } from './images.js';
import { LocalModerator, type PhotoLoader } from './local.js';
import { moderationRequest } from './request.js';
import { TextMatcher, wordList } from './text.js';
import { ModerationUnavailable, type Moderator } from './types.js';

/** The content check (DECISIONS §15): a Moderator interface, the local implementation and the createTask hook. */
export { LocalModerator, type PhotoLoader, type LocalModeratorOptions } from './local.js';
export { NsfwjsClassifier, type ImageClassifier } from './images.js';
export { TextMatcher, wordList } from './text.js';
export { moderationRequest } from './request.js';
export { ModerationUnavailable, type Moderator, type ModerationRequest, type Verdict } from './types.js';

/** Photo bytes: GenGate's own file links from the blob store, anything else through the network guard with size and time limits. */
export function photoLoader(guard: NetGuard, files: Files, limits: { maxBytes: number; timeoutMs: number }): PhotoLoader {
  return async (url) => {
    const id = files.linkId(url);
    if (id) {
      const name = decodeURIComponent(url.split('/').pop() ?? '');
      const file = await files.open(id, name);
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

/** The local Moderator from the settings. */
export function buildModerator(config: Config, guard: NetGuard, files: Files): Moderator {
  const fileText = config.MODERATION_WORDS_FILE ? readFileSync(config.MODERATION_WORDS_FILE, 'utf8') : null;
  return new LocalModerator(
    new TextMatcher(wordList(config.MODERATION_WORDS, fileText)),
    config.MODERATION_IMAGES === 'off' ? null : new NsfwjsClassifier(),
    photoLoader(guard, files, { maxBytes: config.MODERATION_FETCH_MAX_BYTES, timeoutMs: config.MODERATION_FETCH_TIMEOUT_MS }),
    { threshold: config.MODERATION_IMAGE_THRESHOLD, failOpen: config.MODERATION_FAIL_OPEN },
  );
}

/** The createTask hook: throws 400 nsfw_content_detected on rejection, 400 for an unusable photo, 500 when the check cannot run. */
export function contentCheck(moderator: Moderator): (input: Record<string, unknown>) => Promise<void> {
  return async (input) => {
    if (input.nsfw_check !== true) return;
    let verdict;
    try {
      verdict = await moderator.check(moderationRequest(input));
    } catch (e) {
      if (e instanceof ModerationUnavailable && e.clientFault) throw Errors.invalid(e.message);
      const why = e instanceof ModerationUnavailable ? e.message : 'the content check failed';
      throw new AppError('internal', `${why}; the content check could not run, so nothing was created or charged (retry later, or send nsfw_check false)`);
    }
    if (!verdict.ok) throw Errors.contentRejected(`${verdict.reason}; no task was created and nothing was charged`);
  };
}
