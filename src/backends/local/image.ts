import sharp from 'sharp';
import { imageSize } from './dimensions.js';
import { effectiveSeed, seededRandom } from './random.js';
import { writeAtomically, type RenderedFile } from './output.js';

/** What the local backend needs to draw an image. */
export interface ImageRenderParams {
  /** One of ASPECT_RATIOS, or adaptive/auto (square). Ignored when sizeClass is an explicit WxH. */
  aspectRatio?: string;
  /** `1K`, `2K`, `4K` (long side 1024·n) or an explicit `WxH`; default 1K. */
  sizeClass?: string;
  format: 'png' | 'jpeg';
  /** Same seed and parameters, same pixels; without one the seed comes from the prompt. */
  seed?: number;
  /** Drawn along the bottom edge so a person can tell renders apart. */
  prompt?: string;
}

/** Colour cells blown up to the full size: cheap at 4K, and smooth pictures compress quickly. */
const GRID = 5;
const MAX_PROMPT_LINES = 3;

// XML 1.0 forbids these code points outright; librsvg rejects the whole SVG if one slips through.
// eslint-disable-next-line no-control-regex -- the control characters are what it finds
const XML_FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function escapeXml(text: string): string {
  return text.replace(XML_FORBIDDEN, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Greedy word wrap to `width` characters, at most `maxLines` lines, the last one ellipsised when cut. */
export function wrapText(text: string, width: number, maxLines: number): string[] {
  const words = text.replace(/\s+/g, ' ').trim().split(' ').filter(Boolean);
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    for (const piece of word.match(new RegExp(`.{1,${width}}`, 'gsu')) ?? []) {
      if (line && line.length + 1 + piece.length <= width) line += ` ${piece}`;
      else {
        if (line) lines.push(line);
        line = piece;
      }
    }
  }
  if (line) lines.push(line);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  kept[maxLines - 1] = `${kept[maxLines - 1]!.slice(0, Math.max(0, width - 1))}…`;
  return kept;
}

/** A translucent band with the prompt, as an SVG the width of the image. */
function promptBand(prompt: string, width: number): { svg: Buffer; height: number } | null {
  const fontSize = Math.max(12, Math.round(width / 36));
  const pad = Math.round(fontSize * 0.8);
  // DejaVu/Liberation-like sans fonts average about 0.55 em per character.
  const perLine = Math.max(8, Math.floor((width - 2 * pad) / (fontSize * 0.55)));
  const lines = wrapText(prompt, perLine, MAX_PROMPT_LINES);
  if (lines.length === 0) return null;
  const lineHeight = Math.round(fontSize * 1.3);
  const height = lines.length * lineHeight + 2 * pad;
  const texts = lines.map((l, i) => `<text x="${pad}" y="${pad + fontSize + i * lineHeight}">${escapeXml(l)}</text>`).join('');
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<rect width="100%" height="100%" fill="black" fill-opacity="0.45"/>` +
    `<g font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="${fontSize}" fill="white">${texts}</g></svg>`;
  return { svg: Buffer.from(svg), height };
}

/** Renders a seeded colour-field image of the requested size class and aspect ratio, with the prompt drawn in. */
export async function renderImage(params: ImageRenderParams, dst: string): Promise<RenderedFile> {
  const { width, height } = imageSize(params.sizeClass, params.aspectRatio);
  const random = seededRandom(effectiveSeed(params.seed, params.prompt));
  const cells = Buffer.alloc(GRID * GRID * 3);
  for (let i = 0; i < cells.length; i++) cells[i] = Math.floor(random() * 256);

  // Two steps: a smooth cubic blow-up to 1/8 size, then a cheap linear one. One cubic step to 4K costs ~3x more.
  const [smallW, smallH] = [Math.ceil(width / 8), Math.ceil(height / 8)];
  const small = await sharp(cells, { raw: { width: GRID, height: GRID, channels: 3 } })
    .resize(smallW, smallH, { fit: 'fill', kernel: 'cubic' })
    .raw()
    .toBuffer();
  let image = sharp(small, { raw: { width: smallW, height: smallH, channels: 3 } }).resize(width, height, {
    fit: 'fill',
    kernel: 'linear',
  });
  const band = params.prompt ? promptBand(params.prompt, width) : null;
  if (band && band.height < height) image = image.composite([{ input: band.svg, top: height - band.height, left: 0 }]);
  image = params.format === 'png' ? image.png({ compressionLevel: 3, adaptiveFiltering: false }) : image.jpeg({ quality: 88, mozjpeg: false });

  const bytes = await writeAtomically(dst, async (tmp) => (await image.toFile(tmp)).size);
  return { path: dst, mime: params.format === 'png' ? 'image/png' : 'image/jpeg', bytes, width, height };
}
