import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { resolveDraftFinal } from '../../src/catalog/index.js';
import { accepts, catalog, facts, photo, refuses, validated, videoList } from './support.js';

/** SPEC "Draft flow (seedance-2.5)": the request shapes here; the draft lookup belongs to the lifecycle. */

const M = 'seedance-2.5';
const P = { prompt: 'a paper boat in rain' };

describe('draft', () => {
  it('draft true forces 480p whatever resolution was asked', () => {
    expect(accepts(M, { ...P, draft: true, resolution: '1080p' })).toMatchObject({ draft: true, resolution: '480p' });
    expect(accepts(M, { ...P, draft: false, resolution: '1080p' })).toMatchObject({ draft: false, resolution: '1080p' });
  });
});

describe('draft final (draft_task_id)', () => {
  it('takes only output_format, watermark and return_last_frame besides the id, and fills no defaults', () => {
    const v = validated(M, { draft_task_id: 'tsk_1', output_format: 'mov', watermark: 'true', return_last_frame: false });
    expect(v).toMatchObject({ model: M, draftFinal: true, input: { draft_task_id: 'tsk_1', output_format: 'mov', watermark: true, return_last_frame: false } });
    expect(Object.keys(v.input)).toHaveLength(4);
    expect(validated(M, { draft_task_id: 'tsk_1', draft: false }).input).toEqual({ draft_task_id: 'tsk_1' });
  });
  it.each([
    ['prompt', 'again'],
    ['first_frame_url', photo(1)],
    ['image_urls', [photo(1)]],
    ['video_urls', videoList(1)],
    ['audio_urls', ['https://gg.test/files/a/x.mp3']],
    ['resolution', '720p'],
    ['duration', 10],
    ['seed', 7],
    ['nsfw_check', true],
  ])('refuses %s with a draft_task_id', (field, value) => {
    refuses(
      M,
      { draft_task_id: 'tsk_1', [field]: value },
      new RegExp(
        `^input\\.${field} cannot be sent with input\\.draft_task_id for seedance-2\\.5: a draft final takes its prompt, media and settings from the draft and may change only output_format, watermark or return_last_frame \\(got `,
      ),
    );
  });
  it('refuses an alias the same way, naming what was sent', () => {
    refuses(M, { draft_task_id: 'tsk_1', size: '1:1' }, /^input\.size cannot be sent with input\.draft_task_id/);
    refuses(M, { draft_task_id: 'tsk_1', tools: [{ type: 'web_search' }] }, /^input\.tools cannot be sent/);
  });
  it('draft and draft_task_id are mutually exclusive', () => {
    refuses(
      M,
      { draft_task_id: 'tsk_1', draft: true },
      'input.draft and input.draft_task_id cannot be sent together for seedance-2.5: draft true makes a new draft, draft_task_id renders the final of a finished one (got draft true)',
    );
  });
  it('still checks the values it allows', () => {
    refuses(M, { draft_task_id: 'tsk_1', output_format: 'gif' }, /^input\.output_format must be one of "mp4", "mov"/);
  });
});

describe('resolveDraftFinal (what the lifecycle calls with the draft it found)', () => {
  const draftInput = accepts(M, { ...P, draft: true, video_urls: videoList(1), duration: 'auto', watermark: true }, facts([6]));
  const final = validated(M, { draft_task_id: 'tsk_d', watermark: false });

  it('renders the draft input at 1080p with the allowed changes, an automatic length fixed to the draft real length', () => {
    const merged = resolveDraftFinal(catalog, final, { taskId: 'tsk_d', model: M, input: draftInput, realSeconds: 11.5 });
    expect(merged).toMatchObject({
      prompt: P.prompt,
      draft: false,
      draft_task_id: 'tsk_d',
      resolution: '1080p',
      watermark: false,
      duration: 12,
      video_urls: videoList(1),
    });
  });
  it('keeps an automatic length when the draft length is unknown', () => {
    expect(resolveDraftFinal(catalog, final, { taskId: 'tsk_d', model: M, input: draftInput }).duration).toBe('auto');
  });
  it('refuses a task that is not a draft, or a draft of another model', () => {
    const notDraft = accepts(M, P);
    expect(() => resolveDraftFinal(catalog, final, { taskId: 'tsk_x', model: M, input: notDraft })).toThrow(
      'input.draft_task_id must be a task created with input.draft true for seedance-2.5 (got "tsk_x", which is not a draft)',
    );
    expect(() => resolveDraftFinal(catalog, final, { taskId: 'tsk_y', model: 'seedance-2.0', input: draftInput })).toThrow(AppError);
  });
});
