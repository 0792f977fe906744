import type { ModerationRequest } from './types.js';

const PHOTO_FIELD = /image|frame|photo|picture/i;
const OTHER_LINK_FIELD = /url|asset|task_id|video|audio/i;

/** Collects the texts and photo links of a validated input (DECISIONS §15: the prompt and every photo). */
export function moderationRequest(input: Record<string, unknown>): ModerationRequest {
  const request: ModerationRequest = { texts: [], photos: [] };
  const visit = (path: string, key: string, value: unknown) => {
    if (typeof value === 'string') {
      if (PHOTO_FIELD.test(key) && /^https?:\/\//i.test(value)) request.photos.push([path, value]);
      else if (!OTHER_LINK_FIELD.test(key)) request.texts.push([path, value]);
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => visit(`${path}[${i}]`, key, v));
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) visit(`${path}.${k}`, k, v);
    }
  };
  for (const [k, v] of Object.entries(input)) visit(`input.${k}`, k, v);
  return request;
}
