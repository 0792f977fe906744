import { choice, flag, links, seed, text } from '../fields.js';
import { requires } from '../rules.js';
import type { FieldDef, ModelDef, PriceRule, Rule } from '../types.js';
import { PHOTO_FORMATS, PHOTO_UPLOAD_MB, defineModel, rates, usd } from './define.js';

/**
 * Image models. SPEC.md shows only that image inputs use `prompt`, `resolution` (a size class
 * such as 1K), `aspect_ratio` and `image_input`; the rest follows each model family's public
 * documentation (DECISIONS §11). Every run returns one image.
 */
interface ImageSpec {
  id: string;
  aliases?: readonly string[];
  title: string;
  summary: string;
  promptMax: number;
  /** `image_input`: photos to edit or refer to; `min` 1 makes them required. */
  images?: { min: number; max: number };
  resolution?: { values: readonly [string, ...string[]]; default: string };
  quality?: boolean;
  aspects: readonly [string, ...string[]];
  defaultAspect: string;
  seed: boolean;
  price: PriceRule;
}

const ASPECTS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'] as const;
const PHOTO = { kind: 'image', formats: PHOTO_FORMATS } as const;

function imageModel(spec: ImageSpec): ModelDef {
  const fields: Record<string, FieldDef> = {
    prompt: text({ max: spec.promptMax, description: 'What the image shows, or how to change the given photos.' }),
  };
  const rules: Rule[] = [requires('prompt')];
  if (spec.images) {
    fields.image_input = links(PHOTO, { ...spec.images, description: 'Photos to edit or use as references.' });
    if (spec.images.min > 0) rules.push(requires('image_input'));
  }
  if (spec.resolution) {
    fields.resolution = choice(spec.resolution.values, {
      default: spec.resolution.default,
      description: 'Size class of the image (long side about 1K, 2K or 4K pixels).',
    });
  }
  if (spec.quality) {
    fields.quality = choice(['auto', 'low', 'medium', 'high'], {
      default: 'auto',
      description: 'Rendering quality; sets the price (auto is priced as medium).',
    });
  }
  const followsPhoto = spec.aspects.includes('auto') ? ' ("auto" follows the first photo)' : '';
  fields.aspect_ratio = choice(spec.aspects, { default: spec.defaultAspect, description: `Aspect ratio of the image${followsPhoto}. Alias: size.` });
  fields.output_format = choice(['png', 'jpeg'], {
    default: 'png',
    same: { jpg: 'jpeg' },
    description: 'File format of the image ("jpg" is taken as "jpeg").',
  });
  fields.nsfw_check = flag({ default: false, description: 'Check the prompt and photos before charging; a rejection costs nothing.' });
  if (spec.seed) fields.seed = seed();
  return defineModel({
    id: spec.id,
    aliases: spec.aliases ?? [],
    kind: 'image',
    title: spec.title,
    summary: spec.summary,
    fields,
    rules,
    media: spec.images
      ? { images: { field: 'image_input', ...spec.images, formats: PHOTO_FORMATS, linkFormats: [], assets: false, uploadMb: PHOTO_UPLOAD_MB } }
      : {},
    price: spec.price,
    hints: { image_urls: 'photos go in input.image_input', ...(spec.images ? {} : { image_input: 'this model takes no photos' }) },
  });
}

const flat = (price: string): PriceRule => ({ unit: 'image', rates: { '*': usd(price) } });
const SIZE_CLASSES = ['1K', '2K', '4K'] as const;

export const nanoBanana = imageModel({
  id: 'google/nano-banana',
  aliases: ['vendor/nano-banana'],
  title: 'Nano Banana',
  summary: 'Text to image.',
  promptMax: 5000,
  aspects: ASPECTS,
  defaultAspect: '1:1',
  seed: true,
  price: flat('0.020'),
});

export const nanoBananaEdit = imageModel({
  id: 'google/nano-banana-edit',
  aliases: ['vendor/nano-banana-edit'],
  title: 'Nano Banana Edit',
  summary: 'Edits or combines 1 to 10 photos by a text instruction.',
  promptMax: 5000,
  images: { min: 1, max: 10 },
  aspects: ['auto', ...ASPECTS],
  defaultAspect: 'auto',
  seed: true,
  price: flat('0.020'),
});

/** Nano Banana 2 and Pro share their inputs and differ in price. */
const nanoBananaSized = (spec: Pick<ImageSpec, 'id' | 'title' | 'summary' | 'price'>) =>
  imageModel({
    ...spec,
    promptMax: 20_000,
    images: { min: 0, max: 14 },
    resolution: { values: SIZE_CLASSES, default: '1K' },
    aspects: ['auto', ...ASPECTS],
    defaultAspect: 'auto',
    seed: true,
  });

export const nanoBanana2 = nanoBananaSized({
  id: 'nano-banana-2',
  title: 'Nano Banana 2',
  summary: 'Text to image or photo editing with up to 14 photos, at 1K, 2K or 4K.',
  price: { unit: 'image', by: 'resolution', rates: rates({ '1K': '0.040', '2K': '0.060', '4K': '0.090' }) },
});

export const nanoBananaPro = nanoBananaSized({
  id: 'nano-banana-pro',
  title: 'Nano Banana Pro',
  summary: 'High-fidelity text to image or photo editing with up to 14 photos, at 1K, 2K or 4K.',
  price: { unit: 'image', by: 'resolution', rates: rates({ '1K': '0.090', '2K': '0.090', '4K': '0.120' }) },
});

/** Seedream Pro and Flash: one flat price each, whatever the size class. */
const seedream = (spec: Pick<ImageSpec, 'id' | 'title' | 'summary' | 'resolution' | 'price'>) =>
  imageModel({ ...spec, promptMax: 5000, images: { min: 0, max: 10 }, aspects: ASPECTS, defaultAspect: '1:1', seed: true });

export const seedreamPro = seedream({
  id: 'seedream-pro',
  title: 'Seedream Pro',
  summary: 'Text to image or editing with up to 10 reference photos, at 1K, 2K or 4K (one price).',
  resolution: { values: SIZE_CLASSES, default: '2K' },
  price: flat('0.030'),
});

export const seedreamFlash = seedream({
  id: 'seedream-flash',
  title: 'Seedream Flash',
  summary: 'Fast text to image or editing with up to 10 reference photos, at 1K or 2K (one price).',
  resolution: { values: ['1K', '2K'], default: '1K' },
  price: flat('0.015'),
});

/** OpenAI-family image models: quality sets the price; they take no seed. */
const gptImage = (spec: Pick<ImageSpec, 'id' | 'title' | 'summary' | 'defaultAspect'> & { images?: ImageSpec['images'] }) =>
  imageModel({
    ...spec,
    promptMax: 32_000,
    quality: true,
    aspects: ['auto', '1:1', '3:2', '2:3'],
    seed: false,
    price: { unit: 'image', by: 'quality', rates: rates({ low: '0.011', medium: '0.042', high: '0.167' }), sameAs: { auto: 'medium' } },
  });

export const gptImageText = gptImage({
  id: 'gpt-image-2.5-text-to-image',
  title: 'GPT Image 2.5 (text to image)',
  summary: 'Text to image with strong text rendering; quality low, medium or high.',
  defaultAspect: '1:1',
});

export const gptImageEdit = gptImage({
  id: 'gpt-image-2.5-image-to-image',
  title: 'GPT Image 2.5 (image to image)',
  summary: 'Edits or combines 1 to 16 photos by a text instruction; quality low, medium or high.',
  images: { min: 1, max: 16 },
  defaultAspect: 'auto',
});
