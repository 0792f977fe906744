import { describe, expect, it } from 'vitest';
import { validateInput } from '../../src/catalog/index.js';
import { accepts, audio, audioList, catalog, facts, photo, refuses, validated, video, videoList } from './support.js';

/** SPEC "Media limits", the seedance-2.5 task types, the trim fields and DECISIONS §10–§11. */

const FAST = 'seedance-2.0-fast';
const V25 = 'seedance-2.5';
const P = { prompt: 'a dancer on a rooftop' };

describe('media limits: photos', () => {
  it('fast takes JPG, PNG and WebP links and refuses other formats by name', () => {
    expect(accepts(FAST, { ...P, image_urls: [photo(1, 'jpeg'), photo(2, 'png'), photo(3, 'webp'), 'https://cdn.example.com/noext'] }).image_urls).toHaveLength(
      4,
    );
    refuses(
      FAST,
      { ...P, image_urls: [photo(1, 'gif')] },
      /^input\.image_urls\[0\] must be a public https link or an upload link to a JPG, PNG or WebP photo for seedance-2\.0-fast; GIF is not accepted here/,
    );
    refuses(FAST, { ...P, image_urls: [photo(1, 'bmp')] }, /BMP is not accepted here/);
  });
  it('2.5 also takes BMP, TIFF, GIF and HEIC as public links, and asset:// ids', () => {
    const links = ['bmp', 'tiff', 'gif', 'heic'].map((e, i) => photo(i, e));
    expect(accepts(V25, { ...P, image_urls: [...links, 'asset://char-42'] }).image_urls).toHaveLength(5);
    expect(accepts(V25, { ...P, first_frame_url: 'asset://frame_1' }).first_frame_url).toBe('asset://frame_1');
  });
  it('but upload links are only JPG, PNG or WebP, and asset ids only on 2.5', () => {
    refuses(V25, { ...P, image_urls: ['https://gg.test/files/x/a.gif'] }, /GIF is not accepted here/);
    refuses(FAST, { ...P, image_urls: ['asset://char-42'] }, /^input\.image_urls\[0\] must be .* \(got "asset:\/\/char-42"\)$/);
    refuses(V25, { ...P, image_urls: ['asset://bad id'] }, /\(got "asset:\/\/bad id"\)$/);
  });
  it('accepts a plain-http upload link of this service for photos, never other http links', () => {
    const local = { uploadBaseUrl: 'http://127.0.0.1:8080' };
    const link = 'http://127.0.0.1:8080/files/abc/p.png';
    expect(validateInput(catalog, FAST, { ...P, image_urls: [link] }, undefined, local).input.image_urls).toEqual([link]);
    refuses(FAST, { ...P, image_urls: [link] }, /^input\.image_urls\[0\] must be a public https link/);
    refuses(FAST, { ...P, image_urls: ['https://user:pw@example.com/p.png'] }, /may not carry a user name or password/);
  });
  it('without a known upload address, video links only need to be http(s)', () => {
    expect(validateInput(catalog, FAST, { ...P, video_urls: ['http://10.0.0.1/v.mp4'] }).input.video_urls).toHaveLength(1);
    expect(() => validateInput(catalog, FAST, { ...P, video_urls: ['ftp://10.0.0.1/v.mp4'] })).toThrow(/must be a link returned by POST/);
  });
  it('photo facts from uploads must be photos of an accepted format', () => {
    const url = 'https://gg.test/files/p1/pic';
    expect(accepts(FAST, { ...P, image_urls: [url] }, { [url]: { kind: 'image', format: 'PNG' } }).image_urls).toEqual([url]);
    refuses(FAST, { ...P, image_urls: [url] }, /^input\.image_urls\[0\] must be .* \(got a video file\)$/, { [url]: { kind: 'video', format: 'MP4' } });
    refuses(FAST, { ...P, first_frame_url: url }, /^input\.first_frame_url must be .* \(got a GIF file\)$/, { [url]: { kind: 'image', format: 'GIF' } });
  });
});

describe('media limits: video and audio seconds', () => {
  it('fast: each clip 2 to 15 s, total at most 15 s', () => {
    const ok = validated(FAST, { ...P, video_urls: videoList(3) }, facts([5, 5, 5]));
    expect(ok.media?.sourceSeconds).toBe(15);
    refuses(
      FAST,
      { ...P, video_urls: videoList(3) },
      'input.video_urls must add up to at most 15 s of video for seedance-2.0-fast; set input.auto_trim true to trim the longest clips, or input.trim_video_to (got 3 clips of 16 s in total)',
      facts([5, 5, 6]),
    );
    refuses(
      FAST,
      { ...P, video_urls: videoList(1) },
      'input.video_urls[0] must be a clip of 2 to 15 s for seedance-2.0-fast; set input.trim_video_to or input.trim_to_duration to keep only its start (got a clip of 16 s)',
      facts([16]),
    );
    refuses(FAST, { ...P, video_urls: videoList(1) }, /must be a clip of 2 to 15 s for seedance-2\.0-fast \(got a clip of 1 s\)$/, facts([1]));
  });
  it('fast: audio total at most 15 s; MP3 or WAV', () => {
    const input = { ...P, image_urls: [photo(1)], audio_urls: audioList(2) };
    expect(validated(FAST, input, facts([], [10, 5])).media?.clips.map((c) => c.keepSeconds)).toEqual([10, 5]);
    refuses(FAST, input, /^input\.audio_urls must add up to at most 15 s of audio/, facts([], [10, 6]));
    refuses(FAST, { ...input, audio_urls: [audio(0, 'ogg')] }, /^input\.audio_urls\[0\] must be .*MP3 or WAV audio file.*OGG is not accepted here/);
    refuses(FAST, input, /^input\.audio_urls\[1\] must be .* \(got a FLAC file\)$/, {
      [audio(0)]: { kind: 'audio', format: 'MP3', seconds: 3 },
      [audio(1)]: { kind: 'audio', format: 'FLAC', seconds: 3 },
    });
  });
  it('2.5: each clip 2 to 30 s, totals at most 30 s, audio alone allowed', () => {
    expect(validated(V25, { ...P, video_urls: videoList(2) }, facts([20, 10])).media?.sourceSeconds).toBe(30);
    refuses(V25, { ...P, video_urls: videoList(2) }, /add up to at most 30 s of video .*\(got 2 clips of 31 s in total\)$/, facts([20, 11]));
    expect(accepts(V25, { ...P, audio_urls: audioList(3) }, facts([], [10, 10, 10])).audio_urls).toHaveLength(3);
    refuses(V25, { ...P, audio_urls: audioList(2) }, /at most 30 s of audio/, facts([], [20, 11]));
  });
  it('fast: audio alone is not allowed', () => {
    refuses(
      FAST,
      { ...P, audio_urls: audioList(1) },
      'input.audio_urls needs at least one photo (input.image_urls or input.first_frame_url) or video (input.video_urls) with it for seedance-2.0-fast; audio alone is not supported (got audio only)',
    );
    expect(accepts(FAST, { ...P, audio_urls: audioList(1), first_frame_url: photo(1) }).audio_urls).toHaveLength(1);
  });
  it('a clip must be a known upload (facts) of the right kind', () => {
    refuses(
      FAST,
      { ...P, video_urls: [video(9)] },
      /^input\.video_urls\[0\] must be a link returned by POST \/api\/v1\/files\/upload for this account that has not expired/,
      facts([5]),
    );
    refuses(FAST, { ...P, video_urls: [video(0)] }, /^input\.video_urls\[0\] must be .*MP4 or MOV video .*\(got an audio file\)$/, {
      [video(0)]: { kind: 'audio', seconds: 5 },
    });
  });
});

describe('trimming (DECISIONS §11 order)', () => {
  it('trim_video_to keeps the first N seconds of each clip, shorter clips unchanged', () => {
    const v = validated(FAST, { ...P, video_urls: videoList(2), trim_video_to: 6 }, facts([20, 4]));
    expect(v.media?.clips.map((c) => [c.seconds, c.keepSeconds])).toEqual([
      [20, 6],
      [4, 4],
    ]);
    expect(v.media?.facts[video(0)]?.seconds).toBe(6);
  });
  it('trim_to_duration trims to duration; with edit or auto to the model limit', () => {
    expect(validated(FAST, { ...P, video_urls: videoList(1), trim_to_duration: true, duration: 8 }, facts([20])).media?.sourceSeconds).toBe(8);
    expect(validated(FAST, { ...P, video_urls: videoList(1), trim_to_duration: true, video_mode: 'edit' }, facts([20])).media?.sourceSeconds).toBe(15);
    expect(validated(V25, { ...P, video_urls: videoList(1), trim_to_duration: true, duration: 'auto' }, facts([30])).media?.sourceSeconds).toBe(30);
  });
  it('per-clip checks come before auto_trim: auto_trim alone does not save a clip over the clip limit', () => {
    refuses(FAST, { ...P, video_urls: videoList(1), auto_trim: true }, /must be a clip of 2 to 15 s/, facts([20]));
  });
  it('auto_trim lowers the longest clips to one common whole length until the total fits', () => {
    const v = validated(FAST, { ...P, video_urls: videoList(3), auto_trim: true }, facts([10, 8, 6]));
    expect(v.media?.clips.map((c) => c.keepSeconds)).toEqual([5, 5, 5]);
    const w = validated(V25, { ...P, video_urls: videoList(3), auto_trim: true }, facts([25, 12, 3]));
    expect(w.media?.clips.map((c) => c.keepSeconds)).toEqual([15, 12, 3]);
    const x = validated(V25, { ...P, video_urls: videoList(3), auto_trim: true }, facts([25, 20, 3]));
    expect(x.media?.clips.map((c) => c.keepSeconds)).toEqual([13, 13, 3]);
    expect(
      validated(FAST, { ...P, image_urls: [photo(1)], audio_urls: audioList(2), auto_trim: true }, facts([], [12, 9])).media?.clips.map((c) => c.keepSeconds),
    ).toEqual([7, 7]);
  });
  it('trimming is idempotent: checking the trimmed facts again changes nothing', () => {
    const input = { ...P, video_urls: videoList(3), auto_trim: true, trim_video_to: 9 };
    const first = validated(FAST, input, facts([10, 8, 6]));
    const again = validated(FAST, input, first.media!.facts);
    expect(again.media?.clips).toEqual(first.media?.clips.map((c) => ({ ...c, seconds: c.keepSeconds })));
  });
});

describe('seedance-2.5 task types', () => {
  it('auto needs a prompt (or a first frame); media optional', () => {
    refuses(
      V25,
      { video_mode: 'auto' },
      /^input\.prompt is required for seedance-2\.5 unless input\.first_frame_url is given; it must be a text of up to 30000 characters \(got nothing\)$/,
    );
    refuses(V25, { prompt: '   ' }, /^input\.prompt is required/);
    expect(accepts(V25, P).video_mode).toBe('auto');
  });
  it('reference needs photo, video or audio references', () => {
    refuses(
      V25,
      { ...P, video_mode: 'reference' },
      'input.video_mode "reference" needs at least one reference in input.image_urls, input.video_urls or input.audio_urls for seedance-2.5 (got none)',
    );
    expect(accepts(V25, { ...P, video_mode: 'reference', audio_urls: audioList(1) }).video_mode).toBe('reference');
  });
  it('edit needs video_urls and a clip of at least 4 s', () => {
    refuses(V25, { ...P, video_mode: 'edit' }, 'input.video_mode "edit" needs at least one clip in input.video_urls for seedance-2.5 (got no video_urls)');
    refuses(
      V25,
      { ...P, video_mode: 'edit', video_urls: videoList(1) },
      'input.video_urls[0] must be a clip of at least 4 s in video_mode "edit" for seedance-2.5 (got a clip of 3 s)',
      facts([3]),
    );
    refuses(V25, { ...P, video_mode: 'edit', video_urls: videoList(1), trim_video_to: 3 }, /\(got a clip of 3 s after trimming\)$/, facts([10]));
    expect(validated(V25, { ...P, video_mode: 'edit', video_urls: videoList(1) }, facts([4])).media?.sourceSeconds).toBe(4);
  });
  it('extend needs video_urls', () => {
    refuses(V25, { ...P, video_mode: 'extend', image_urls: [photo(1)] }, /"extend" needs at least one clip in input\.video_urls/);
    expect(accepts(V25, { ...P, video_mode: 'extend', video_urls: videoList(1) }, facts([8])).video_mode).toBe('extend');
  });
});
