import { expect } from 'vitest';
import { AppError } from '../../src/errors.js';
import { buildCatalog, validateInput, type MediaFacts, type ValidatedInput } from '../../src/catalog/index.js';

/** The default catalog and the upload address the tests pretend the service has. */
export const catalog = buildCatalog();
export const BASE = 'https://gg.test';

/** An upload link of a video, audio file or photo. */
export const video = (n: number | string, ext = 'mp4') => `${BASE}/files/v${n}/clip.${ext}`;
export const audio = (n: number | string, ext = 'mp3') => `${BASE}/files/a${n}/sound.${ext}`;
export const photo = (n: number | string, ext = 'jpg') => `https://img.example.com/p/${n}.${ext}`;
export const photos = (count: number) => Array.from({ length: count }, (_, i) => photo(i));

/** Facts as the upload service would give them: whole seconds, kind and format from the bytes. */
export function facts(videos: number[] = [], audios: number[] = []): MediaFacts {
  const out: Record<string, { kind: 'video' | 'audio'; format: string; seconds: number }> = {};
  videos.forEach((s, i) => (out[video(i)] = { kind: 'video', format: 'MP4', seconds: s }));
  audios.forEach((s, i) => (out[audio(i)] = { kind: 'audio', format: 'MP3', seconds: s }));
  return out;
}
export const videoList = (count: number) => Array.from({ length: count }, (_, i) => video(i));
export const audioList = (count: number) => Array.from({ length: count }, (_, i) => audio(i));

/** Validates and returns the normalised input; fails the test on a refusal. */
export function accepts(model: string, input: unknown, media?: MediaFacts): Record<string, unknown> {
  return validated(model, input, media).input;
}

export function validated(model: string, input: unknown, media?: MediaFacts): ValidatedInput {
  return validateInput(catalog, model, input, media, { uploadBaseUrl: BASE });
}

/** Asserts a refusal of `kind` whose msg matches `pattern`; returns the msg. */
export function refuses(model: string, input: unknown, pattern: RegExp | string, media?: MediaFacts, kind: AppError['kind'] = 'invalid_request'): string {
  let caught: unknown;
  try {
    validated(model, input, media);
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected a refusal matching ${pattern}`).toBeInstanceOf(AppError);
  const err = caught as AppError;
  expect(err.kind).toBe(kind);
  expect(err.message).toMatch(pattern);
  return err.message;
}
