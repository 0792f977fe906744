import { choice, flag, text, weight, whole } from '../fields.js';
import { sunoRules } from '../rules.js';
import type { ModelDef } from '../types.js';
import { defineModel, usd } from './define.js';

/**
 * SPEC: suno-v6. Two MP3 tracks per run at one price. Everything but prompt, custom_mode and
 * instrumental applies only with custom_mode true (sunoRules refuses it otherwise). nsfw_check is
 * the common rule of every model input.
 */
export const sunoV6: ModelDef = defineModel({
  id: 'suno-v6',
  kind: 'music',
  title: 'Suno v6',
  summary: 'Songs with vocals or instrumentals; each run returns two different MP3 tracks.',
  fields: {
    version: choice(['v6', 'v6-wild', 'v6-mini', 'v5.5', 'v5', 'v4.5-plus', 'v4.5-all', 'v4.5', 'v4'], {
      default: 'v6',
      description: 'Model version; same price. Custom mode only.',
    }),
    prompt: text({
      max: 5000,
      description:
        'Without custom mode: the subject of the song, up to 3000 characters (lyrics are written for you). With custom mode: the lyrics, up to 5000 characters, section tags like [Verse] allowed.',
    }),
    custom_mode: flag({ default: false, description: 'Own lyrics and the settings below; title then required.' }),
    instrumental: flag({ default: false, description: 'No vocals.' }),
    title: text({ max: 80, description: 'Song title. Required with custom mode.' }),
    style: text({ max: 1000, description: 'Genre, instruments, mood.' }),
    negative_tags: text({ max: 1000, description: 'What to avoid.' }),
    vocal_gender: choice(['auto', 'female', 'male'], { description: 'Voice.' }),
    duration: whole({ min: 10, max: 360, auto: true, description: 'Length in seconds (10 to 360) or "auto".' }),
    variety: choice(['auto', 'off', 'normal', 'high', 'extra', 'max'], { description: 'How much the two tracks differ.' }),
    style_weight: weight('How closely to follow the style: "auto" or 0 to 1 in steps of 0.05.'),
    weirdness_constraint: weight('How experimental: "auto" or 0 to 1 in steps of 0.05.'),
    audio_weight: weight('Weight of the vocals: "auto" or 0 to 1 in steps of 0.05; not for instrumental tracks.'),
    nsfw_check: flag({ default: false, description: 'Check the prompt before charging; a rejection costs nothing.' }),
  },
  rules: [sunoRules],
  price: { unit: 'run', rates: { '*': usd('0.09') } },
});
