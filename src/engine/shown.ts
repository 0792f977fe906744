/** Longest failure message a client is shown; the rest is detail for the log. */
const MAX_SHOWN = 300;

/**
 * An absolute server path: POSIX (`/var/lib/...`, `file:/...`) or Windows (`C:\...`). The lookbehind keeps
 * URLs (`https://host/a/b`), fractions (`1/2`) and words (`and/or`) out: a path starts a token.
 */
const SERVER_PATH = /(?<![\w.:/\\~-])(?:file:)?(?:\/[\w.@%+~-]+)+\/?|\b[A-Za-z]:\\[^\s'"`,;)]+/g;
/** What media/run.ts appends after a tool's exit: the last line the tool wrote (raw output). */
const TOOL_WORDS = /\b(ffmpeg|ffprobe) (exited with code -?\d+|was killed by \w+): [^;)]*/g;
/** A relative path of three or more parts (`data/render-cache/x.mp4`); two parts stay (`image/png`, `and/or`). */
const RELATIVE_PATH = /(?<=^|[\s'"(=])(?:\.{1,2}\/)?[\w.-]+(?:\/[\w.@%+~-]+){2,}\/?/g;

/**
 * The failure message a client may see (failMsg, error.message, the callback's msg): the first line,
 * without a tool's last words, server paths (absolute, or relative to DATA_DIR) replaced, bounded.
 */
export function shownMessage(message: string): string {
  const firstLine = message.split(/\r?\n/, 1)[0] ?? '';
  const clean = firstLine.replace(TOOL_WORDS, '$1 $2').replace(SERVER_PATH, '(a server file)').replace(RELATIVE_PATH, '(a server file)').trim();
  const shown = clean.length > MAX_SHOWN ? `${clean.slice(0, MAX_SHOWN - 1)}…` : clean;
  return shown || 'the generation failed';
}
