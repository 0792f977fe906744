import { Errors } from '../errors.js';
import { characterCount } from './coerce.js';
import { given, missing, rule } from './rules.js';
import type { Rule, RuleContext } from './types.js';

/**
 * The extension point of the definition format (docs/decisions/3301): rules that data cannot say,
 * kept in code under a name and referenced from a definition as `{named: NAME}`. Each lists the
 * input fields it reads, so a definition that uses it without them is refused at load. Every use
 * is listed in docs/models.md ("Extension points"), generated from the catalog.
 */
export interface NamedRule extends Rule {
  /** Input fields the rule reads; the model must have them all. */
  readonly fields: readonly string[];
  /** Why data cannot say it (shown in docs/models.md). */
  readonly why: string;
}

const SUNO_ALWAYS = new Set(['prompt', 'custom_mode', 'instrumental', 'nsfw_check']);

/** suno-v6: the custom-mode settings, `title` with custom mode, lyrics length, `audio_weight` not with instrumental. */
const sunoCustomMode: NamedRule = {
  fields: ['prompt', 'custom_mode', 'instrumental', 'title', 'audio_weight'],
  why: "one note for several checks in a fixed order, and a prompt limit (3000) that depends on custom_mode, with Suno's own words in the refusals",
  ...rule(
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
  ),
};

function checkLength(input: Record<string, unknown>, ctx: RuleContext, max: number, what: string) {
  const count = typeof input.prompt === 'string' ? characterCount(input.prompt, max) : 0;
  if (count > max) {
    const where = ctx.where('prompt');
    throw Errors.invalid(`${where.path} must be a text of up to ${max} characters (${what}) for ${where.model} (got a text of ${count} characters)`);
  }
}

/** Every named rule, by the name a definition uses. */
export const NAMED_RULES: ReadonlyMap<string, NamedRule> = new Map([['suno-custom-mode', sunoCustomMode]]);
