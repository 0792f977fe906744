import { describe, expect, it } from 'vitest';
import { accepts, audioList, facts, photo, photos, refuses, video, videoList } from './support.js';

/**
 * One accepting and one refusing case for every row of the SPEC table "Video models
 * seedance-2.0-fast, seedance-2.5, seedance-1.5-pro", for each of the three columns. A "-" in
 * the table means the field is refused by name.
 */

const FAST = 'seedance-2.0-fast';
const V25 = 'seedance-2.5';
const PRO = 'seedance-1.5-pro';
const P = { prompt: 'a red fox runs through snow' };

/** Refused because the model does not have the field. */
const notAField = (model: string, input: Record<string, unknown>, field: string) =>
  refuses(model, { ...P, ...input }, new RegExp(`^input\\.${field} is not an input field of ${model.replace('.', '\\.')}`));

describe('seedance table: prompt', () => {
  it.each([FAST, V25, PRO])('%s accepts up to 30000 characters and refuses 30001', (m) => {
    expect(accepts(m, { prompt: 'x'.repeat(30_000) }).prompt).toHaveLength(30_000);
    refuses(m, { prompt: 'x'.repeat(30_001) }, `input.prompt must be a text of up to 30000 characters for ${m} (got a text of 30001 characters)`);
  });
  it('counts characters, not UTF-16 units', () => {
    expect(accepts(V25, { prompt: '🦊'.repeat(30_000) }).prompt).toBeDefined();
    refuses(V25, { prompt: '🦊'.repeat(30_001) }, /got a text of 30001 characters/);
  });
  it.each([FAST, V25, PRO])('%s refuses a prompt that is not text', (m) => {
    refuses(m, { prompt: { text: 'x' } }, /^input\.prompt must be a text of up to 30000 characters .* \(got \{"text":"x"\}\)$/);
  });
});

describe('seedance table: first_frame_url and last_frame_url', () => {
  it.each([FAST, V25, PRO])('%s accepts a first frame, with or without a last frame', (m) => {
    expect(accepts(m, { ...P, first_frame_url: photo(1) }).first_frame_url).toBe(photo(1));
    expect(accepts(m, { ...P, first_frame_url: photo(1), last_frame_url: photo(2, 'png') }).last_frame_url).toBe(photo(2, 'png'));
  });
  it.each([FAST, V25, PRO])('%s refuses a frame that is not an https or upload link', (m) => {
    refuses(
      m,
      { ...P, first_frame_url: 'http://img.example.com/a.jpg' },
      /^input\.first_frame_url must be a public https link or an upload link to a JPG, PNG or WebP photo/,
    );
    refuses(m, { ...P, first_frame_url: 'not a link' }, /\(got "not a link"\)$/);
  });
  it.each([FAST, V25, PRO])('%s refuses a last frame without a first frame', (m) => {
    refuses(m, { ...P, last_frame_url: photo(2) }, `input.last_frame_url is only accepted together with input.first_frame_url for ${m}`);
  });
  it('seedance-1.5-pro animates a photo given as first frame, with no prompt needed', () => {
    expect(accepts(PRO, { first_frame_url: photo(1) })).toMatchObject({ first_frame_url: photo(1), resolution: '720p' });
    refuses(PRO, {}, /^input\.prompt is required for seedance-1\.5-pro unless input\.first_frame_url is given/);
  });
});

describe('seedance table: image_urls', () => {
  it('fast takes up to 9 and refuses 10', () => {
    expect(accepts(FAST, { ...P, image_urls: photos(9) }).image_urls).toHaveLength(9);
    refuses(FAST, { ...P, image_urls: photos(10) }, `input.image_urls must be a list of up to 9 links for ${FAST} (got 10 links)`);
  });
  it('2.5 takes up to 30 and refuses 31', () => {
    expect(accepts(V25, { ...P, image_urls: photos(30) }).image_urls).toHaveLength(30);
    refuses(V25, { ...P, image_urls: photos(31) }, /must be a list of up to 30 links .*\(got 31 links\)/);
  });
  it('1.5-pro has no image_urls and says to use the first frame', () => {
    const msg = notAField(PRO, { image_urls: [photo(1)] }, 'image_urls');
    expect(msg).toContain('first_frame_url');
  });
  it('refuses a list that is not a list, naming the bad entry by index', () => {
    refuses(FAST, { ...P, image_urls: photo(1) }, /^input\.image_urls must be a list of up to 9 links/);
    refuses(FAST, { ...P, image_urls: [photo(1), 7] }, /^input\.image_urls\[1\] must be .* \(got 7\)$/);
  });
});

describe('seedance table: video_urls and audio_urls', () => {
  it('fast takes up to 3 videos and 3 audio files, refuses 4', () => {
    expect(accepts(FAST, { ...P, video_urls: videoList(3), audio_urls: audioList(3) }).video_urls).toHaveLength(3);
    refuses(FAST, { ...P, video_urls: videoList(4) }, /^input\.video_urls must be a list of up to 3 links .*\(got 4 links\)/);
    refuses(FAST, { ...P, image_urls: [photo(1)], audio_urls: audioList(4) }, /^input\.audio_urls must be a list of up to 3 links/);
  });
  it('2.5 takes up to 10 of each, refuses 11', () => {
    expect(accepts(V25, { ...P, video_urls: videoList(10), audio_urls: audioList(10) }).audio_urls).toHaveLength(10);
    refuses(V25, { ...P, video_urls: videoList(11) }, /up to 10 links .*\(got 11 links\)/);
    refuses(V25, { ...P, audio_urls: audioList(11) }, /^input\.audio_urls must be a list of up to 10 links/);
  });
  it('1.5-pro takes neither', () => {
    notAField(PRO, { video_urls: [video(0)] }, 'video_urls');
    notAField(PRO, { audio_urls: audioList(1) }, 'audio_urls');
  });
  it('video and audio links must be upload links of this service', () => {
    refuses(
      FAST,
      { ...P, video_urls: ['https://cdn.example.com/v.mp4'] },
      /^input\.video_urls\[0\] must be a link returned by POST \/api\/v1\/files\/upload to an MP4 or MOV video/,
    );
    refuses(
      FAST,
      { ...P, image_urls: [photo(1)], audio_urls: [video(0)] },
      /^input\.audio_urls\[0\] must be .* MP3 or WAV audio file.*this link names a MP4 video/,
    );
  });
});

describe('seedance table: video_mode (and its alias omni_reference_task_type)', () => {
  it.each([FAST, V25])('%s accepts auto (default), reference, edit and extend', (m) => {
    expect(accepts(m, P).video_mode).toBe('auto');
    expect(accepts(m, { ...P, video_mode: 'reference', image_urls: [photo(1)] }).video_mode).toBe('reference');
    expect(accepts(m, { ...P, video_mode: 'edit', video_urls: [video(0)] }, facts([6])).video_mode).toBe('edit');
    expect(accepts(m, { ...P, video_mode: 'Extend', video_urls: [video(0)] }, facts([6])).video_mode).toBe('extend');
    expect(accepts(m, { ...P, omni_reference_task_type: 'reference', audio_urls: audioList(1), image_urls: [photo(1)] }).video_mode).toBe('reference');
  });
  it.each([FAST, V25])('%s refuses other values', (m) => {
    refuses(m, { ...P, video_mode: 'remix' }, `input.video_mode must be one of "auto", "reference", "edit", "extend" for ${m} (got "remix")`);
    refuses(m, { ...P, omni_reference_task_type: 'remix' }, /^input\.omni_reference_task_type must be one of/);
  });
  it('1.5-pro has no video_mode', () => {
    notAField(PRO, { video_mode: 'auto' }, 'video_mode');
    notAField(PRO, { omni_reference_task_type: 'auto' }, 'omni_reference_task_type');
  });
});

describe('seedance table: resolution', () => {
  it('fast: 480p, 720p (default); no 1080p', () => {
    expect(accepts(FAST, P).resolution).toBe('720p');
    expect(accepts(FAST, { ...P, resolution: '480P' }).resolution).toBe('480p');
    refuses(FAST, { ...P, resolution: '1080p' }, `input.resolution must be one of "480p", "720p" for ${FAST} (got "1080p")`);
  });
  it.each([V25, PRO])('%s: 480p, 720p (default), 1080p', (m) => {
    expect(accepts(m, P).resolution).toBe('720p');
    expect(accepts(m, { ...P, resolution: '1080p' }).resolution).toBe('1080p');
    refuses(m, { ...P, resolution: '4k' }, `input.resolution must be one of "480p", "720p", "1080p" for ${m} (got "4k")`);
  });
});

describe('seedance table: aspect_ratio (and its alias size)', () => {
  const all = ['adaptive', '16:9', '9:16', '1:1', '4:3', '3:4', '21:9'];
  it.each([FAST, V25])('%s accepts the seven ratios', (m) => {
    for (const r of all) expect(accepts(m, { ...P, aspect_ratio: r }).aspect_ratio).toBe(r);
    expect(accepts(m, { ...P, size: '9:16' }).aspect_ratio).toBe('9:16');
    refuses(m, { ...P, aspect_ratio: '2:1' }, `input.aspect_ratio must be one of "adaptive", "16:9", "9:16", "1:1", "4:3", "3:4", "21:9" for ${m} (got "2:1")`);
    refuses(m, { ...P, size: '2:1' }, /^input\.size must be one of/);
  });
  it('defaults: fast 16:9, 2.5 adaptive, 1.5-pro 16:9', () => {
    expect(accepts(FAST, P).aspect_ratio).toBe('16:9');
    expect(accepts(V25, P).aspect_ratio).toBe('adaptive');
    expect(accepts(PRO, P).aspect_ratio).toBe('16:9');
  });
  it('1.5-pro has the list without adaptive', () => {
    expect(accepts(PRO, { ...P, aspect_ratio: '21:9' }).aspect_ratio).toBe('21:9');
    refuses(
      PRO,
      { ...P, aspect_ratio: 'adaptive' },
      `input.aspect_ratio must be one of "16:9", "9:16", "1:1", "4:3", "3:4", "21:9" for ${PRO} (got "adaptive")`,
    );
  });
  it('size and aspect_ratio together must agree', () => {
    expect(accepts(FAST, { ...P, size: '1:1', aspect_ratio: '1:1' }).aspect_ratio).toBe('1:1');
    refuses(
      FAST,
      { ...P, aspect_ratio: '1:1', size: '9:16' },
      /^input\.aspect_ratio and input\.size mean the same for seedance-2\.0-fast but differ; send one of them \(got "1:1" and "9:16"\)$/,
    );
  });
});

describe('seedance table: duration', () => {
  it('fast: 4 to 15 as number or text, default 5', () => {
    expect(accepts(FAST, P).duration).toBe(5);
    expect(accepts(FAST, { ...P, duration: 4 }).duration).toBe(4);
    expect(accepts(FAST, { ...P, duration: '15' }).duration).toBe(15);
    refuses(FAST, { ...P, duration: '20' }, 'input.duration must be a whole number from 4 to 15 for seedance-2.0-fast (got "20")');
    refuses(FAST, { ...P, duration: 3 }, /from 4 to 15 .*\(got 3\)$/);
    refuses(FAST, { ...P, duration: 5.5 }, /must be a whole number .*\(got 5\.5\)$/);
  });
  it('2.5: 4 to 30, or auto / -1, default 5', () => {
    expect(accepts(V25, P).duration).toBe(5);
    expect(accepts(V25, { ...P, duration: 30 }).duration).toBe(30);
    expect(accepts(V25, { ...P, duration: 'auto' }).duration).toBe('auto');
    expect(accepts(V25, { ...P, duration: -1 }).duration).toBe('auto');
    expect(accepts(V25, { ...P, duration: '-1' }).duration).toBe('auto');
    refuses(V25, { ...P, duration: 31 }, 'input.duration must be a whole number from 4 to 30, "auto" or -1 for seedance-2.5 (got 31)');
  });
  it('1.5-pro: 4 to 12, default 5; auto is only for 2.5', () => {
    expect(accepts(PRO, { ...P, duration: '12' }).duration).toBe(12);
    refuses(PRO, { ...P, duration: 13 }, /from 4 to 12 for seedance-1\.5-pro \(got 13\)$/);
    for (const m of [FAST, PRO]) {
      refuses(m, { ...P, duration: 'auto' }, /automatic length is not available for this model \(got "auto"\)$/);
      refuses(m, { ...P, duration: -1 }, /automatic length is not available for this model \(got -1\)$/);
    }
  });
});

describe('seedance table: booleans', () => {
  const rows: [string, string[], boolean][] = [
    ['generate_audio', [FAST, V25, PRO], true],
    ['return_last_frame', [FAST, V25], false],
    ['watermark', [V25], false],
    ['draft', [V25], false],
    ['web_search', [FAST, V25], false],
    ['camera_fixed', [PRO], false],
    ['nsfw_check', [FAST, V25, PRO], false],
    ['trim_to_duration', [FAST, V25], false],
    ['auto_trim', [FAST, V25], false],
  ];
  it.each(rows)('%s: default, true/false and their text, refusal, and "-" models', (field, models, byDefault) => {
    for (const m of [FAST, V25, PRO]) {
      if (!models.includes(m)) {
        notAField(m, { [field]: true }, field);
        continue;
      }
      expect(accepts(m, P)[field]).toBe(byDefault);
      expect(accepts(m, { ...P, [field]: !byDefault })[field]).toBe(!byDefault);
      expect(accepts(m, { ...P, [field]: String(!byDefault).toUpperCase() })[field]).toBe(!byDefault);
      refuses(m, { ...P, [field]: 'yes' }, `input.${field} must be true or false for ${m} (got "yes")`);
    }
  });
});

describe('seedance table: output_format, draft_task_id, tools', () => {
  it('output_format: 2.5 mp4 (default) or mov; others do not have it', () => {
    expect(accepts(V25, P).output_format).toBe('mp4');
    expect(accepts(V25, { ...P, output_format: 'mov' }).output_format).toBe('mov');
    refuses(V25, { ...P, output_format: 'avi' }, 'input.output_format must be one of "mp4", "mov" for seedance-2.5 (got "avi")');
    notAField(FAST, { output_format: 'mp4' }, 'output_format');
    notAField(PRO, { output_format: 'mp4' }, 'output_format');
  });
  it('draft_task_id: 2.5 only; a task id', () => {
    expect(accepts(V25, { draft_task_id: 'task_abc123' })).toEqual({ draft_task_id: 'task_abc123' });
    refuses(V25, { draft_task_id: 'has space' }, /^input\.draft_task_id must be a task id/);
    notAField(FAST, { draft_task_id: 'x' }, 'draft_task_id');
    notAField(PRO, { draft_task_id: 'x' }, 'draft_task_id');
  });
  it.each([FAST, V25])('tools with web_search on %s means web_search true', (m) => {
    expect(accepts(m, { ...P, tools: [{ type: 'web_search' }] }).web_search).toBe(true);
    expect(accepts(m, { ...P, tools: [] }).web_search).toBe(false);
    refuses(m, { ...P, tools: [{ type: 'code_interpreter' }] }, `input.tools[0].type must be "web_search" for ${m} (got "code_interpreter")`);
    refuses(m, { ...P, tools: 'web_search' }, /^input\.tools must be a list of tools like/);
    refuses(m, { ...P, tools: [{ type: 'web_search' }], web_search: false }, /^input\.tools and input\.web_search mean the same .* but differ/);
  });
  it('1.5-pro has no tools', () => notAField(PRO, { tools: [{ type: 'web_search' }] }, 'tools'));
});

describe('seedance table: seed and trim_video_to', () => {
  it.each([FAST, V25, PRO])('%s: seed -1 to 4294967295, empty means random', (m) => {
    expect(accepts(m, P).seed).toBe(-1);
    expect(accepts(m, { ...P, seed: '42' }).seed).toBe(42);
    expect(accepts(m, { ...P, seed: 4294967295 }).seed).toBe(4294967295);
    expect(accepts(m, { ...P, seed: '' }).seed).toBe(-1);
    refuses(m, { ...P, seed: 4294967296 }, `input.seed must be a whole number from -1 to 4294967295 for ${m} (got 4294967296)`);
    refuses(m, { ...P, seed: -2 }, /\(got -2\)$/);
  });
  it('trim_video_to: fast 2 to 15, 2.5 2 to 30, 1.5-pro none', () => {
    expect(accepts(FAST, { ...P, trim_video_to: '15' }).trim_video_to).toBe(15);
    refuses(FAST, { ...P, trim_video_to: 16 }, 'input.trim_video_to must be a whole number from 2 to 15 for seedance-2.0-fast (got 16)');
    expect(accepts(V25, { ...P, trim_video_to: 30 }).trim_video_to).toBe(30);
    refuses(V25, { ...P, trim_video_to: 1 }, /from 2 to 30 for seedance-2\.5 \(got 1\)$/);
    notAField(PRO, { trim_video_to: 5 }, 'trim_video_to');
  });
});
