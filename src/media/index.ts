// Public face of the media capability: ffmpeg/ffprobe wrappers. Other capabilities import only this file.
export { resolveBinary, setBinary, type ResolvedBinary, type Tool } from './binaries.js';
export { MediaError, fileArg, runFfmpeg, runTool, type MediaFailure, type RunOptions, type RunResult } from './run.js';
export { probe, readProbeOutput, wholeSeconds, type MediaInfo, type MediaKind } from './probe.js';
export { SNIFF_BYTES, sniff, sniffFile, typeOf, type Sniffed, type SniffedFormat } from './sniff.js';
export { lastFrame, movToMp4, trim } from './convert.js';
export {
  DEFAULT_VIDEO_LIMITS,
  configureMedia,
  inputThreads,
  mediaSettings,
  outputThreads,
  videoOverLimits,
  type MediaSettings,
  type VideoLimits,
} from './limits.js';
export { checkToolchain, describeToolchain, type ToolInfo } from './toolchain.js';
export { checkIntact, probeWhole } from './intact.js';
