import { RegExpMatcher, englishDataset, englishRecommendedTransformers } from 'obscenity';

/**
 * Text check: the maintained `obscenity` English dataset (which handles l33t speak and
 * character tricks) plus the operator's own words (MODERATION_WORDS, MODERATION_WORDS_FILE),
 * matched as whole words, case-insensitively.
 */
export class TextMatcher {
  private readonly matcher = new RegExpMatcher({ ...englishDataset.build(), ...englishRecommendedTransformers });
  private readonly extra: RegExp | null;

  constructor(words: readonly string[]) {
    const clean = words.map((w) => w.trim().toLowerCase()).filter((w) => w.length > 0);
    const escaped = clean.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+'));
    this.extra = escaped.length > 0 ? new RegExp(`(?<![\\p{L}\\p{N}])(?:${escaped.join('|')})(?![\\p{L}\\p{N}])`, 'iu') : null;
  }

  /** True when the text contains a listed word. */
  rejects(text: string): boolean {
    return this.matcher.hasMatch(text) || (this.extra?.test(text) ?? false);
  }
}

/** The operator's word list: comma- or newline-separated words from the setting and the file's lines (# starts a comment). */
export function wordList(setting: string, fileText: string | null): string[] {
  const fromFile = (fileText ?? '').split('\n').map((l) => l.replace(/#.*/, ''));
  return [...setting.split(/[,\n]/), ...fromFile].map((w) => w.trim()).filter((w) => w.length > 0);
}
