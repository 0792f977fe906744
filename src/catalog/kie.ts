/**
 * The kie.ai model ids of KIE.md §1 and their input mappings (KIE.md §2), as data (DECISIONS §18,
 * docs/decisions/0400). Each row is one kie.ai id, the GenGate model it is, and how its input
 * names reach that model's fields; the default catalog adds them as aliases. A `kie` upstream
 * (DECISIONS §19) reads the same rows backwards: one table, both directions.
 */

/** One kie.ai id: the GenGate model it names and its input mapping (the JSON format of the catalog file). */
export interface KieAlias {
  readonly name: string;
  readonly model: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/** Every kie.ai model sends `nsfw_checker`. */
const COMMON = { nsfw_checker: 'nsfw_check' } as const;
const IGNORED_BOOLEAN = { ignore: 'boolean' } as const;
const ONE_PHOTO = { to: ['first_frame_url'] } as const;
const GROK = { ...COMMON, mode: { ignore: ['fun', 'normal', 'spicy'] } } as const;
const WAN = { ...COMMON, ratio: 'aspect_ratio', prompt_extend: IGNORED_BOOLEAN, watermark: IGNORED_BOOLEAN } as const;
const SEEDANCE_2 = { ...COMMON, reference_image_urls: 'image_urls', reference_video_urls: 'video_urls', reference_audio_urls: 'audio_urls' } as const;
/** gpt-image is priced by quality and seedream by resolution: the other one is refused by name. */
const GPT_IMAGE = { ...COMMON, resolution: { instead: 'quality' } } as const;
const SEEDREAM = { ...COMMON, quality: { instead: 'resolution' } } as const;

/** KIE.md §1, row by row (ids that equal a GenGate id carry their mapping under that id). */
/** kie.ai ids whose `output_format` spells JPEG "jpg" (KIE.md §2): a kie upstream sends "jpg" to them. */
export const KIE_JPG_IDS: ReadonlySet<string> = new Set(['google/nano-banana', 'google/nano-banana-edit', 'nano-banana-2', 'nano-banana-pro']);

export const KIE_ALIASES: readonly KieAlias[] = [
  { name: 'google/nano-banana', model: 'google/nano-banana', input: { ...COMMON, image_size: 'aspect_ratio' } },
  { name: 'google/nano-banana-edit', model: 'google/nano-banana-edit', input: { ...COMMON, image_size: 'aspect_ratio', image_urls: 'image_input' } },
  { name: 'nano-banana-2', model: 'nano-banana-2', input: { ...COMMON, image_urls: 'image_input', google_search: IGNORED_BOOLEAN } },
  { name: 'nano-banana-pro', model: 'nano-banana-pro', input: COMMON },
  { name: 'gpt-image-2-text-to-image', model: 'gpt-image-2.5-text-to-image', input: GPT_IMAGE },
  { name: 'gpt-image-2-image-to-image', model: 'gpt-image-2.5-image-to-image', input: { ...GPT_IMAGE, input_urls: 'image_input' } },
  { name: 'seedream/5-pro-text-to-image', model: 'seedream-pro', input: SEEDREAM },
  { name: 'seedream/5-pro-image-to-image', model: 'seedream-pro', input: { ...SEEDREAM, image_urls: 'image_input' } },
  { name: 'seedream/5-lite-text-to-image', model: 'seedream-flash', input: SEEDREAM },
  { name: 'seedream/5-lite-image-to-image', model: 'seedream-flash', input: { ...SEEDREAM, image_urls: 'image_input' } },
  { name: 'bytedance/seedance-2-5', model: 'seedance-2.5', input: SEEDANCE_2 },
  { name: 'bytedance/seedance-2', model: 'seedance-2.0', input: SEEDANCE_2 },
  { name: 'bytedance/seedance-2-fast', model: 'seedance-2.0-fast', input: SEEDANCE_2 },
  { name: 'bytedance/seedance-2-mini', model: 'seedance-2.0-mini', input: { ...COMMON, reference_image_urls: 'image_urls' } },
  {
    name: 'bytedance/seedance-1.5-pro',
    model: 'seedance-1.5-pro',
    input: { ...COMMON, input_urls: { to: ['first_frame_url', 'last_frame_url'] }, fixed_lens: 'camera_fixed' },
  },
  { name: 'grok-imagine/text-to-video', model: 'grok-imagine', input: GROK },
  { name: 'grok-imagine/image-to-video', model: 'grok-imagine', input: { ...GROK, image_urls: ONE_PHOTO } },
  { name: 'grok-imagine-video-1-5-preview', model: 'grok-imagine-1.5', input: { ...GROK, image_urls: ONE_PHOTO } },
  { name: 'wan/2-7-text-to-video', model: 'wan-2.7', input: WAN },
  { name: 'wan/2-7-image-to-video', model: 'wan-2.7', input: { ...WAN, image_urls: ONE_PHOTO } },
];
