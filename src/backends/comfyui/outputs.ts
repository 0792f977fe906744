import { obj, str } from '../upstream/util.js';
import type { HistoryEntry } from './server.js';

/** File types a finished workflow's outputs are taken as, by the model's kind. */
const OUTPUT_TYPES = {
  image: /\.(png|jpe?g|webp)$/i,
  video: /\.(mp4|webm|mov|mkv)$/i,
  audio: /\.(mp3|wav|flac|ogg|m4a|opus)$/i,
} as const;

/** The saved output files of a job matching the model's kind, node by node (ComfyUI's `temp` previews are skipped). */
export function outputFiles(entry: HistoryEntry, kind: keyof typeof OUTPUT_TYPES): { filename: string; subfolder: string; type: string }[] {
  const out: { filename: string; subfolder: string; type: string }[] = [];
  for (const node of Object.values(entry.outputs)) {
    for (const list of Object.values(obj(node))) {
      if (!Array.isArray(list)) continue;
      for (const item of list) {
        const f = obj(item);
        const filename = str(f.filename);
        const type = str(f.type) ?? 'output';
        if (filename && type === 'output' && OUTPUT_TYPES[kind].test(filename)) out.push({ filename, subfolder: str(f.subfolder) ?? '', type });
      }
    }
  }
  return out;
}
