import { Errors } from '../errors.js';
import { characterCount } from './coerce.js';
import type { RuleContext, Rule } from './types.js';

/**
 * Cross-field rules ("only together", "required unless"). Each throws a refusal naming the
 * fields involved and what was sent. They run on the normalised input, after every field read.
 */

/** A refusal for a field the rule needs but the client did not send. */
export function missing(ctx: RuleContext, field: string, unless = '') {
  const where = ctx.where(field);
  const def = ctx.model.fields.get(field);
  const allowed = def ? `; it must be ${def.allowed}` : '';
  return Errors.invalid(`${where.path} is required for ${where.model}${unless}${allowed} (got nothing)`);
}

/** Makes a rule from its words and its check. */
export function rule(note: string, check: Rule['check']): Rule {
  return { note, check };
}

function given(value: unknown): boolean {
  return Array.isArray(value) ? value.length > 0 : value !== undefined;
}

/** `field` must be sent. */
export function requires(field: string): Rule {
  return rule(`${field} is required.`, (input, ctx) => {
    if (!given(input[field])) throw missing(ctx, field);
  });
}

/** A prompt is needed unless a first frame is given (image-to-video may go without words). */
export const promptOrFirstFrame: Rule = rule('prompt is required unless first_frame_url is given.', (input, ctx) => {
  if (!given(input.prompt) && !given(input.first_frame_url)) {
    throw missing(ctx, 'prompt', ' unless input.first_frame_url is given');
  }
});

/** The last frame is only used together with the first frame. */
export const lastFrameNeedsFirst: Rule = rule('last_frame_url only together with first_frame_url.', (input, ctx) => {
  if (given(input.last_frame_url) && !given(input.first_frame_url)) {
    const last = ctx.where('last_frame_url');
    throw Errors.invalid(`${last.path} is only accepted together with input.first_frame_url for ${last.model} (got a last frame and no first frame)`);
  }
});

/** video_mode: edit and extend work on a supplied clip; reference needs something to refer to. */
export const videoModeNeeds: Rule = rule(
  'video_mode "edit" and "extend" need video_urls; "reference" needs image_urls, video_urls or audio_urls.',
  (input, ctx) => {
    const mode = input.video_mode;
    const where = ctx.where('video_mode');
    if ((mode === 'edit' || mode === 'extend') && !given(input.video_urls)) {
      throw Errors.invalid(`${where.path} "${mode}" needs at least one clip in input.video_urls for ${where.model} (got no video_urls)`);
    }
    if (mode === 'reference' && !given(input.image_urls) && !given(input.video_urls) && !given(input.audio_urls)) {
      throw Errors.invalid(
        `${where.path} "reference" needs at least one reference in input.image_urls, input.video_urls or input.audio_urls for ${where.model} (got none)`,
      );
    }
  },
);

/** Where audio alone is not allowed, reference audio needs a photo or a video with it. */
export const audioNeedsPicture: Rule = rule(
  'audio_urls need a photo (image_urls or first_frame_url) or video_urls with them; audio alone is not supported.',
  (input, ctx) => {
    if (ctx.model.media.audios?.alone) return;
    if (given(input.audio_urls) && !given(input.image_urls) && !given(input.video_urls) && !given(input.first_frame_url)) {
      const where = ctx.where('audio_urls');
      throw Errors.invalid(
        `${where.path} needs at least one photo (input.image_urls or input.first_frame_url) or video (input.video_urls) with it for ${where.model}; audio alone is not supported (got audio only)`,
      );
    }
  },
);

/** A draft renders at the draft resolution whatever was asked (SPEC: "the resolution is forced to 480p"). */
export const draftForcesResolution: Rule = rule('draft true renders at the draft resolution, whatever resolution says.', (input, ctx) => {
  if (input.draft === true && ctx.model.draft) input.resolution = ctx.model.draft.resolution;
});

const SUNO_ALWAYS = new Set(['prompt', 'custom_mode', 'instrumental', 'nsfw_check']);

/** suno-v6: the custom-mode settings, `title` with custom mode, lyrics length, `audio_weight` not with instrumental. */
export const sunoRules: Rule = rule(
  'Without custom_mode only prompt (the subject, up to 3000 characters), instrumental and nsfw_check may be sent (other settings only as their defaults); with custom_mode, title is required and prompt (the lyrics) is required unless instrumental; audio_weight not with instrumental.',
  (input, ctx) => {
    const custom = input.custom_mode === true;
    if (!custom) {
      for (const field of ctx.sent) {
        // A setting sent as its default changes nothing, so a normalised input validates again unchanged.
        if (SUNO_ALWAYS.has(field) || input[field] === ctx.model.fields.get(field)?.default) continue;
        const where = ctx.where(field);
        throw Errors.invalid(
          `${where.path} applies only when input.custom_mode is true for ${where.model}; without custom mode only prompt, instrumental and nsfw_check are used (got custom_mode false)`,
        );
      }
      if (!given(input.prompt)) throw missing(ctx, 'prompt', ' (the subject of the song)');
      checkLength(input, ctx, 3000, 'the subject of the song without custom mode');
    } else {
      if (!given(input.title)) throw missing(ctx, 'title', ' when input.custom_mode is true');
      if (input.instrumental !== true && !given(input.prompt)) {
        throw missing(ctx, 'prompt', ' (the lyrics) when input.custom_mode is true and input.instrumental is false');
      }
    }
    if (input.instrumental === true && given(input.audio_weight)) {
      const where = ctx.where('audio_weight');
      throw Errors.invalid(`${where.path} does not apply to instrumental tracks for ${where.model}; leave it out (got instrumental true)`);
    }
  },
);

function checkLength(input: Record<string, unknown>, ctx: RuleContext, max: number, what: string) {
  const count = typeof input.prompt === 'string' ? characterCount(input.prompt, max) : 0;
  if (count > max) {
    const where = ctx.where('prompt');
    throw Errors.invalid(`${where.path} must be a text of up to ${max} characters (${what}) for ${where.model} (got a text of ${count} characters)`);
  }
}
