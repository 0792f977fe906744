/**
 * One kie.ai-shaped body per kie.ai model id of KIE.md §1 (names and values as KIE.md §2 gives
 * them) and the GenGate body it stands for. Shared by the catalog test and the end-to-end test.
 */

const P1 = 'https://img.example.com/kie/1.jpg';
const P2 = 'https://img.example.com/kie/2.png';

export interface KieCase {
  /** The kie.ai model id a client sends. */
  kie: string;
  /** The GenGate model it is. */
  model: string;
  /** The input as a kie.ai client sends it. */
  sent: Record<string, unknown>;
  /** The same request in GenGate's names. */
  gengate: Record<string, unknown>;
}

const seedance2 = (kie: string, model: string): KieCase => ({
  kie,
  model,
  sent: { prompt: 'a dancer', reference_image_urls: [P1], resolution: '480p', aspect_ratio: '16:9', duration: '4', generate_audio: false, nsfw_checker: false },
  gengate: { prompt: 'a dancer', image_urls: [P1], resolution: '480p', aspect_ratio: '16:9', duration: 4, generate_audio: false, nsfw_check: false },
});

const seedream = (kie: string, model: string, photos: boolean): KieCase => ({
  kie,
  model,
  sent: { prompt: 'a lighthouse', ...(photos ? { image_urls: [P1, P2] } : {}), aspect_ratio: '16:9', quality: 'basic', nsfw_checker: false },
  gengate: { prompt: 'a lighthouse', ...(photos ? { image_input: [P1, P2] } : {}), aspect_ratio: '16:9', resolution: '2K', nsfw_check: false },
});

export const KIE_CASES: readonly KieCase[] = [
  {
    kie: 'google/nano-banana',
    model: 'google/nano-banana',
    sent: { prompt: 'a red fox', image_size: '16:9', output_format: 'jpg', nsfw_checker: false },
    gengate: { prompt: 'a red fox', aspect_ratio: '16:9', output_format: 'jpeg', nsfw_check: false },
  },
  {
    kie: 'google/nano-banana-edit',
    model: 'google/nano-banana-edit',
    sent: { prompt: 'make it night', image_urls: [P1, P2], image_size: '3:4', output_format: 'png', nsfw_checker: false },
    gengate: { prompt: 'make it night', image_input: [P1, P2], aspect_ratio: '3:4', output_format: 'png', nsfw_check: false },
  },
  {
    kie: 'nano-banana-2',
    model: 'nano-banana-2',
    sent: { prompt: 'a map', image_urls: [P1], resolution: '2K', aspect_ratio: 'auto', google_search: false, output_format: 'jpg', nsfw_checker: false },
    gengate: { prompt: 'a map', image_input: [P1], resolution: '2K', aspect_ratio: 'auto', output_format: 'jpeg', nsfw_check: false },
  },
  {
    kie: 'nano-banana-pro',
    model: 'nano-banana-pro',
    sent: { prompt: 'a poster', image_input: [P1], resolution: '1K', aspect_ratio: '1:1', output_format: 'png', nsfw_checker: false },
    gengate: { prompt: 'a poster', image_input: [P1], resolution: '1K', aspect_ratio: '1:1', output_format: 'png', nsfw_check: false },
  },
  {
    // A market model of its own (decision 3310): kie.ai's names are its names.
    kie: 'gpt-image-2-text-to-image',
    model: 'gpt-image-2-text-to-image',
    sent: { prompt: 'a sign that says hello', aspect_ratio: '1:1', resolution: '1K', nsfw_checker: false },
    gengate: { prompt: 'a sign that says hello', aspect_ratio: '1:1', resolution: '1K', nsfw_checker: false },
  },
  {
    kie: 'gpt-image-2-image-to-image',
    model: 'gpt-image-2-image-to-image',
    sent: { prompt: 'add a hat', input_urls: [P1], aspect_ratio: '4:3', resolution: '2K', nsfw_checker: false },
    gengate: { prompt: 'add a hat', input_urls: [P1], aspect_ratio: '4:3', resolution: '2K', nsfw_checker: false },
  },
  seedream('seedream/5-pro-text-to-image', 'seedream-pro', false),
  seedream('seedream/5-pro-image-to-image', 'seedream-pro', true),
  seedream('seedream/5-lite-text-to-image', 'seedream-flash', false),
  seedream('seedream/5-lite-image-to-image', 'seedream-flash', true),
  seedance2('bytedance/seedance-2-5', 'seedance-2.5'),
  seedance2('bytedance/seedance-2', 'seedance-2.0'),
  seedance2('bytedance/seedance-2-fast', 'seedance-2.0-fast'),
  seedance2('bytedance/seedance-2-mini', 'seedance-2.0-mini'),
  {
    kie: 'bytedance/seedance-1.5-pro',
    model: 'seedance-1.5-pro',
    sent: { prompt: 'a flower opens', input_urls: [P1, P2], fixed_lens: true, resolution: '480p', aspect_ratio: '16:9', duration: 4, nsfw_checker: false },
    gengate: {
      prompt: 'a flower opens',
      first_frame_url: P1,
      last_frame_url: P2,
      camera_fixed: true,
      resolution: '480p',
      aspect_ratio: '16:9',
      duration: 4,
      nsfw_check: false,
    },
  },
  {
    kie: 'grok-imagine/text-to-video',
    model: 'grok-imagine',
    sent: { prompt: 'a cat surfs', mode: 'normal', aspect_ratio: '16:9', resolution: '480p', duration: '6', nsfw_checker: false },
    gengate: { prompt: 'a cat surfs', aspect_ratio: '16:9', resolution: '480p', duration: 6, nsfw_check: false },
  },
  {
    kie: 'grok-imagine/image-to-video',
    model: 'grok-imagine',
    sent: { prompt: 'it waves', image_urls: [P1], mode: 'fun', resolution: '480p', duration: 6 },
    gengate: { prompt: 'it waves', first_frame_url: P1, resolution: '480p', duration: 6 },
  },
  {
    kie: 'grok-imagine-video-1-5-preview',
    model: 'grok-imagine-1.5',
    sent: { prompt: 'it jumps', image_urls: [P1], mode: 'spicy', resolution: '480p', duration: '6', nsfw_checker: false },
    gengate: { prompt: 'it jumps', first_frame_url: P1, resolution: '480p', duration: 6, nsfw_check: false },
  },
  {
    kie: 'wan/2-7-text-to-video',
    model: 'wan-2.7',
    sent: { prompt: 'rain on a window', ratio: '9:16', resolution: '480p', duration: '5', prompt_extend: true, watermark: false, nsfw_checker: false },
    gengate: { prompt: 'rain on a window', aspect_ratio: '9:16', resolution: '480p', duration: 5, nsfw_check: false },
  },
  {
    kie: 'wan/2-7-image-to-video',
    model: 'wan-2.7',
    sent: { prompt: 'the boat sails', image_urls: [P1], resolution: '480p', duration: 5, prompt_extend: false, watermark: true },
    gengate: { prompt: 'the boat sails', first_frame_url: P1, resolution: '480p', duration: 5 },
  },
];
