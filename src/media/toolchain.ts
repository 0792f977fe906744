import { binaryChanges, resolveBinary, type ResolvedBinary, type Tool } from './binaries.js';
import { MediaError, runTool } from './run.js';

/** One tool as the server uses it: where it is, how it was found and the version it reports. */
export interface ToolInfo extends ResolvedBinary {
  version: string;
}

/** A working check is trusted this long; /readyz then costs nothing between checks. */
const CHECK_TTL_MS = 30_000;
/** A tiny input every ffmpeg build has: one 16×16 frame from the lavfi colour source. */
const TINY = ['-f', 'lavfi', '-i', 'color=c=black:s=16x16:d=0.04'];

let last: { at: number; binaries: number; result: Promise<void> } | null = null;

/** The version word of `ffmpeg -version`'s first line ("ffmpeg version 5.1.6-0+deb12u1 Copyright ..."). */
function versionOf(stdout: Buffer): string {
  const first = stdout.toString('utf8').split('\n', 1)[0] ?? '';
  return /\bversion\s+(\S+)/.exec(first)?.[1] ?? 'unknown';
}

/** Which ffmpeg and ffprobe this process runs, with their versions; throws MediaError when one is missing or does not start. */
export async function describeToolchain(): Promise<Record<Tool, ToolInfo>> {
  const one = async (tool: Tool): Promise<ToolInfo> => {
    const found = (() => {
      try {
        return resolveBinary(tool);
      } catch (e) {
        throw new MediaError(`${tool} -version`, 'missing_binary', (e as Error).message);
      }
    })();
    const { stdout } = await runTool(tool, ['-version'], `${tool} -version`, { timeoutMs: 10_000 });
    return { ...found, version: versionOf(stdout) };
  };
  const [ffmpeg, ffprobe] = await Promise.all([one('ffmpeg'), one('ffprobe')]);
  return { ffmpeg, ffprobe };
}

/** Runs both tools on a tiny generated input: ffmpeg decodes and encodes one frame, ffprobe reads it back. */
async function runToolchain(): Promise<void> {
  await Promise.all([
    runTool('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', ...TINY, '-frames:v', '1', '-f', 'null', '-'], 'ffmpeg check', { timeoutMs: 10_000 }),
    runTool('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_streams', ...TINY], 'ffprobe check', { timeoutMs: 10_000 }).then(({ stdout }) => {
      if (!stdout.toString('utf8').includes('"codec_type"')) throw new MediaError('ffprobe check', 'bad_output', 'ffprobe printed no stream');
    }),
  ]);
}

/**
 * Checks that the media toolchain really runs (for /readyz): both tools start and handle a tiny
 * input. The outcome is kept CHECK_TTL_MS (a failure only until the next call, and nothing once
 * setBinary changes a tool), so frequent readiness probes do not spawn processes each time.
 * Rejects with MediaError.
 */
export function checkToolchain(now = Date.now()): Promise<void> {
  if (last && now - last.at < CHECK_TTL_MS && last.binaries === binaryChanges()) return last.result;
  const result = runToolchain();
  last = { at: now, binaries: binaryChanges(), result };
  result.catch(() => {
    if (last?.result === result) last = null;
  });
  return result;
}
