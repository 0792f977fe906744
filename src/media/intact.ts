import { readProbeOutput, type FfprobeOutput, type FfprobeStream, type MediaInfo } from './probe.js';
import { MediaError, fileArg, runTool, type RunOptions } from './run.js';

/**
 * ffprobe's compact JSON of a whole file: some 26 bytes per packet. A 30 s upload has some thousands
 * of packets; far more (over 300,000) is not a file we take.
 */
const MAX_OUTPUT_BYTES = 8 * 1024 * 1024;

/** ffprobe's JSON with `-count_packets` and the packets' flags. */
interface PacketOutput extends FfprobeOutput {
  streams?: Array<FfprobeStream & { nb_read_packets?: string }>;
  packets?: Array<{ flags?: string }>;
}

/**
 * Why the packets ffprobe read show a file damaged or truncated, or null when they do not: a packet
 * flagged corrupt (C), or a stream with fewer packets in the file than its index lists.
 */
function damageOf(out: PacketOutput): string | null {
  if (out.packets?.some((p) => p.flags?.includes('C'))) return 'a packet is corrupt';
  for (const s of out.streams ?? []) {
    const listed = s.nb_frames ?? '';
    const read = s.nb_read_packets ?? '';
    if (/^\d+$/.test(listed) && /^\d+$/.test(read) && Number(read) < Number(listed)) {
      return `the index lists ${listed} packets of a stream but only ${read} are in the file`;
    }
  }
  return null;
}

/**
 * Runs ffprobe reading every packet of `file` without decoding (`-count_packets`), printing `show`
 * and each packet's flags as JSON. ffprobe failing, or printing more than a 30 s file can have, is
 * MediaError('unreadable'): the input's fault.
 */
async function readPackets(file: string, show: readonly string[], op: string, options: RunOptions): Promise<PacketOutput> {
  const args = ['-v', 'error', '-count_packets', ...show, '-of', 'json=c=1', fileArg(file)];
  let stdout: Buffer;
  try {
    ({ stdout } = await runTool('ffprobe', args, op, { timeoutMs: 60_000, maxStdoutBytes: MAX_OUTPUT_BYTES, ...options }));
  } catch (e) {
    if (e instanceof MediaError && (e.reason === 'failed' || e.reason === 'bad_output')) {
      throw new MediaError(op, 'unreadable', e.reason === 'failed' ? e.detail : 'more packets than a 30 s file has', e.stderr);
    }
    throw e;
  }
  try {
    return JSON.parse(stdout.toString('utf8')) as PacketOutput;
  } catch {
    throw new MediaError(op, 'bad_output', 'ffprobe printed something that is not JSON');
  }
}

/**
 * Reads every packet of a media file without decoding and throws MediaError('unreadable') when it
 * is damaged or truncated: ffprobe fails, flags a packet corrupt (C), or reads fewer packets than
 * the container's index lists. This is what `ffmpeg -xerror -c copy -f null` found, done by ffprobe
 * so that an upload runs only the (fast-starting) ffprobe (decision 0303).
 */
export async function checkIntact(file: string, options: RunOptions = {}): Promise<void> {
  const op = `check ${file}`;
  const damage = damageOf(await readPackets(file, ['-show_entries', 'stream=nb_frames,nb_read_packets:packet=flags'], op, options));
  if (damage) throw new MediaError(op, 'unreadable', damage);
}

/**
 * `probe` and `checkIntact` in one ffprobe run, so the file is opened, its streams analysed and its
 * bytes read once (decision 0316): the probe's facts, and why the file is damaged or truncated (null
 * when it is whole). Throws like `probe` when ffprobe cannot read the file at all.
 */
export async function probeWhole(file: string, options: RunOptions = {}): Promise<{ info: MediaInfo; damage: string | null }> {
  const op = `probe ${file}`;
  const out = await readPackets(file, ['-show_format', '-show_streams', '-show_entries', 'packet=flags'], op, options);
  return { info: readProbeOutput(out, op), damage: damageOf(out) };
}
