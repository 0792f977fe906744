import { MediaError, fileArg, runTool, type RunOptions } from './run.js';

/** Per-packet output of a whole file: a 30 s upload has some thousands of packets; far more is not a file we take. */
const MAX_OUTPUT_BYTES = 1024 * 1024;

/**
 * Reads every packet of a media file without decoding and throws MediaError('unreadable') when it
 * is damaged or truncated: ffprobe fails, flags a packet corrupt (C), or reads fewer packets than
 * the container's index lists. This is what `ffmpeg -xerror -c copy -f null` found, done by ffprobe
 * so that an upload runs only the (fast-starting) ffprobe (decision 0303).
 */
export async function checkIntact(file: string, options: RunOptions = {}): Promise<void> {
  const op = `check ${file}`;
  const args = ['-v', 'error', '-count_packets', '-show_entries', 'stream=nb_frames,nb_read_packets:packet=flags', '-of', 'csv=p=0', fileArg(file)];
  let out: string;
  try {
    out = (await runTool('ffprobe', args, op, { timeoutMs: 60_000, maxStdoutBytes: MAX_OUTPUT_BYTES, ...options })).stdout.toString('utf8');
  } catch (e) {
    if (e instanceof MediaError && (e.reason === 'failed' || e.reason === 'bad_output')) {
      throw new MediaError(op, 'unreadable', e.reason === 'failed' ? e.detail : 'more packets than a 30 s file has', e.stderr);
    }
    throw e;
  }
  for (const line of out.split('\n')) {
    const fields = line.split(',').map((f) => f.trim());
    // Packet lines are their flags ("K__", "_C_" ...); stream lines are "nb_frames,nb_read_packets".
    if (/^[A-Z_]{2,}$/.test(fields[0] ?? '') && fields[0]!.includes('C')) throw new MediaError(op, 'unreadable', 'a packet is corrupt');
    if (fields.length >= 2 && /^\d+$/.test(fields[0]!) && /^\d+$/.test(fields[1]!) && Number(fields[1]) < Number(fields[0])) {
      throw new MediaError(op, 'unreadable', `the index lists ${fields[0]} packets of a stream but only ${fields[1]} are in the file`);
    }
  }
}
