import { kiePage } from '../fakes/schemas.js';

/**
 * Upstream documents for the import tests, written after the real ones (test/fakes/schemas.ts says
 * whose shape each follows): a fal video endpoint and a fal image endpoint (after
 * fal-ai/bytedance/seedream/v4/text-to-image's queue document), a Replicate model (after Cog's
 * schema of an official image model), and a kie.ai market page (after
 * docs.kie.ai/market/google/nano-banana-edit.md).
 */

type Json = Record<string, unknown>;

const nullable = (schema: Json) => ({ anyOf: [schema, { type: 'null' }] });

export function falDoc(endpoint: string, category: string, name: string, input: Json): Json {
  return {
    openapi: '3.0.4',
    info: {
      title: `Queue OpenAPI for ${endpoint}`,
      version: '1.0.0',
      description: `The OpenAPI schema for the ${endpoint} queue.`,
      'x-fal-metadata': { endpointId: endpoint, category, playgroundUrl: `https://fal.ai/models/${endpoint}` },
    },
    components: {
      securitySchemes: { apiKeyAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Fal Key' } },
      schemas: {
        QueueStatus: { type: 'object', properties: { status: { type: 'string', enum: ['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED'] } }, required: ['status'] },
        [`${name}Input`]: input,
        [`${name}Output`]: { type: 'object', properties: { video: { $ref: '#/components/schemas/File' } }, required: ['video'] },
        File: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
        ImageSize: { type: 'object', title: 'ImageSize', properties: { width: { type: 'integer' }, height: { type: 'integer' } } },
        LoraWeight: { type: 'object', title: 'LoraWeight', properties: { path: { type: 'string' }, scale: { type: 'number' } }, required: ['path'] },
      },
    },
    paths: {
      [`/${endpoint}/requests/{request_id}/status`]: { get: {} },
      [`/${endpoint}`]: {
        post: {
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}Input` } } } },
          responses: { '200': { description: 'The request status.' } },
        },
      },
    },
    servers: [{ url: 'https://queue.fal.run' }],
    security: [{ apiKeyAuth: [] }],
  };
}

export const FAL_VIDEO = 'fal-ai/acme/video/text-to-video';
export const falVideoInput = {
  'x-fal-order-properties': [
    'prompt',
    'image_url',
    'duration',
    'aspect_ratio',
    'resolution',
    'negative_prompt',
    'guidance_scale',
    'seed',
    'loras',
    'sync_mode',
  ],
  type: 'object',
  title: 'AcmeVideoInput',
  required: ['prompt'],
  properties: {
    seed: { ...nullable({ type: 'integer' }), title: 'Seed', description: 'Random seed for reproducibility.' },
    prompt: { type: 'string', title: 'Prompt', maxLength: 2000, description: 'The text prompt describing the video.', examples: ['A paper boat'] },
    negative_prompt: { type: 'string', title: 'Negative Prompt', default: 'blur, distort', description: 'What to avoid.' },
    duration: { type: 'string', enum: ['5', '10'], title: 'Duration', default: '5', description: 'The duration of the video in seconds.' },
    aspect_ratio: { ...nullable({ type: 'string', enum: ['16:9', '9:16', '1:1'] }), title: 'Aspect Ratio', default: '16:9' },
    resolution: { type: 'string', enum: ['480p', '720p'], default: '720p', title: 'Resolution', description: 'Output resolution.' },
    guidance_scale: { type: 'number', minimum: 0, maximum: 10, default: 3.5, title: 'Guidance Scale', description: 'How closely to follow the prompt.' },
    image_url: { ...nullable({ type: 'string' }), title: 'Image Url', description: 'An image to start from.' },
    loras: { type: 'array', items: { $ref: '#/components/schemas/LoraWeight' }, default: [], title: 'Loras', description: 'LoRA weights.' },
    sync_mode: { type: 'boolean', default: false, title: 'Sync Mode', description: 'Return the media as a data URI.' },
  },
};
export const falVideo = falDoc(FAL_VIDEO, 'text-to-video', 'AcmeVideo', falVideoInput);

export const FAL_IMAGE = 'fal-ai/acme/image';
export const falImage = falDoc(FAL_IMAGE, 'text-to-image', 'AcmeImage', {
  'x-fal-order-properties': ['prompt', 'image_size', 'num_images', 'max_images', 'seed', 'sync_mode', 'enable_safety_checker'],
  type: 'object',
  required: ['prompt'],
  properties: {
    prompt: { title: 'Prompt', type: 'string', description: 'The text prompt used to generate the image' },
    num_images: { minimum: 1, maximum: 6, type: 'integer', title: 'Num Images', default: 1 },
    image_size: {
      anyOf: [{ $ref: '#/components/schemas/ImageSize' }, { enum: ['square_hd', 'square', 'portrait_4_3', 'landscape_16_9', 'auto_2K'], type: 'string' }],
      title: 'Image Size',
      description: 'The size of the generated image.',
      default: { height: 2048, width: 2048 },
    },
    max_images: { minimum: 1, maximum: 6, type: 'integer', title: 'Max Images', default: 1 },
    sync_mode: { type: 'boolean', title: 'Sync Mode', default: false },
    enable_safety_checker: {
      title: 'Enable Safety Checker',
      type: 'boolean',
      description: 'If set to true, the safety checker will be enabled.',
      default: true,
    },
    seed: { description: 'Random seed to control the stochasticity of image generation.', type: 'integer', title: 'Seed' },
  },
});

export const REPLICATE_MODEL = 'acme/flux-like';
export const REPLICATE_VERSION = '0123456789abcdef'.repeat(4);
export const replicateModel: Json = {
  url: `https://replicate.com/${REPLICATE_MODEL}`,
  owner: 'acme',
  name: 'flux-like',
  description: 'The fastest image generation model, for local development and personal use',
  visibility: 'public',
  github_url: null,
  paper_url: null,
  license_url: 'https://example.com/license',
  run_count: 12,
  cover_image_url: 'https://example.com/cover.webp',
  default_example: null,
  latest_version: {
    id: REPLICATE_VERSION,
    created_at: '2026-01-01T00:00:00.000Z',
    cog_version: '0.13.0',
    openapi_schema: {
      openapi: '3.0.2',
      info: { title: 'Cog', version: '0.1.0' },
      components: {
        schemas: {
          Input: {
            type: 'object',
            title: 'Input',
            required: ['prompt'],
            properties: {
              seed: { type: 'integer', title: 'Seed', 'x-order': 4, description: 'Random seed. Set for reproducible generation' },
              image: { type: 'string', title: 'Image', format: 'uri', 'x-order': 6, description: 'Input image for image to image mode.' },
              prompt: { type: 'string', title: 'Prompt', 'x-order': 0, description: 'Prompt for generated image' },
              go_fast: { type: 'boolean', title: 'Go Fast', default: true, 'x-order': 5, description: 'Run faster predictions.' },
              num_outputs: {
                type: 'integer',
                title: 'Num Outputs',
                default: 1,
                maximum: 4,
                minimum: 1,
                'x-order': 2,
                description: 'Number of outputs to generate',
              },
              aspect_ratio: {
                allOf: [{ $ref: '#/components/schemas/aspect_ratio' }],
                default: '1:1',
                'x-order': 1,
                description: 'Aspect ratio for the generated image',
              },
              output_format: {
                allOf: [{ $ref: '#/components/schemas/output_format' }],
                default: 'webp',
                'x-order': 3,
                description: 'Format of the output images',
              },
              output_quality: {
                type: 'integer',
                title: 'Output Quality',
                default: 80,
                maximum: 100,
                minimum: 0,
                'x-order': 7,
                description: 'Quality when saving the output images',
              },
            },
          },
          Output: { type: 'array', items: { type: 'string', format: 'uri' }, title: 'Output' },
          aspect_ratio: { enum: ['1:1', '16:9', '9:16'], type: 'string', title: 'aspect_ratio', description: 'An enumeration.' },
          output_format: { enum: ['webp', 'jpg', 'png'], type: 'string', title: 'output_format', description: 'An enumeration.' },
        },
      },
    },
  },
};

export const KIE_MODEL = 'acme/kie-image';
export const kieMarkdown = kiePage(
  'Acme - Kie Image',
  "Image generation and editing using Acme's Kie Image model",
  KIE_MODEL,
  `properties:
  prompt:
    description: >-
      The prompt for image editing (Max length: 5000
      characters)
    type: string
    maxLength: 5000
  image_urls:
    description: >-
      List of URLs of input images for editing, up to 10 images. (File URL
      after upload, not file content; Accepted types: image/jpeg, image/png,
      image/webp; Max size: 10.0MB)
    type: array
    items:
      type: string
      format: uri
    maxItems: 10
  output_format:
    description: Output format for the images
    type: string
    enum:
      - png
      - jpeg
    default: png
  image_size:
    description: Radio description
    type: string
    enum:
      - '1:1'
      - '9:16'
      - '16:9'
      - auto
    default: '1:1'
required:
  - prompt`,
);
