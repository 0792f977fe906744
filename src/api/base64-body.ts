import { Readable } from 'node:stream';
import { AppError, Errors, shown } from '../errors.js';

/**
 * The JSON body of POST /api/file-base64-upload read as it arrives (issue 39 finding 1; decision
 * 2301): `{"base64Data": "...", "fileName": "...", "uploadPath": "..."}` in any order. The
 * base64 text is decoded on the way and never held whole (a 267 MB body held as a string, then
 * parsed, cost 570 MB); the other fields are small strings. At most `limit` bytes are read.
 */
export interface StreamedBase64 {
  /** The decoded bytes of base64Data, as they arrive; fails with an AppError on a malformed body. */
  bytes: Readable;
  /** Every field but base64Data (their raw JSON values), once the whole body has been read. */
  fields: Promise<Record<string, unknown>>;
}

/** The longest JSON value of another field (fileName and uploadPath are at most 1000 characters). */
const MAX_OTHER_VALUE = 64 * 1024;
/** Decoded in runs of this many base64 characters (a multiple of 4). */
const RUN = 64 * 1024;
const WHITE = new Set([0x20, 0x09, 0x0a, 0x0d]);

const notJson = (why: string) => Errors.invalid(`request body is not valid JSON: ${why}`);
const notBase64 = (got: string) => Errors.invalid(`base64Data must be base64 text or a data: URL (data:<type>;base64,...) (got ${shown(got)})`);

/** Reads `body` (at most `limit` bytes) as the base64 upload's JSON object; see StreamedBase64. */
export function streamBase64Body(body: AsyncIterable<Buffer>, limit: number): StreamedBase64 {
  let settle!: { ok: (f: Record<string, unknown>) => void; fail: (e: unknown) => void };
  const fields = new Promise<Record<string, unknown>>((ok, fail) => (settle = { ok, fail }));
  fields.catch(() => {}); // the bytes fail with the same error
  async function* decode(): AsyncGenerator<Buffer> {
    try {
      const scan = new Scanner();
      let read = 0;
      for await (const chunk of body) {
        read += chunk.length;
        if (read > limit) throw new AppError('upload_rejected', `request body is larger than the limit of ${limit} bytes`);
        for (const out of scan.feed(chunk)) yield out;
      }
      for (const out of scan.finish()) yield out;
      settle.ok(scan.fields);
    } catch (e) {
      settle.fail(e);
      throw e;
    }
  }
  return { bytes: Readable.from(decode(), { objectMode: false }), fields };
}

type State = 'start' | 'key' | 'colon' | 'value' | 'comma' | 'done';

/** A byte-by-byte reader of one flat JSON object whose base64Data string is decoded as it passes. */
class Scanner {
  readonly fields: Record<string, unknown> = {};
  private state: State = 'start';
  /** The raw text of the key or of a value other than base64Data being read, and where it stands. */
  private raw: number[] = [];
  private inString = false;
  private escaped = false;
  private depth = 0;
  private key = '';
  /** Inside base64Data's string: its head (to find a data: URL), the base64 run waiting to be decoded, padding seen. */
  private b64: 'head' | 'body' | null = null;
  private head = '';
  private run = '';
  /** Base64 characters seen in all. */
  private length = 0;
  private padding = 0;
  private seen = false;

  feed(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (this.b64 === 'body' && !this.escaped) {
        // The fast path: the run up to the next quote or backslash is found natively and checked as one text.
        const quote = chunk.indexOf(0x22, i);
        const slash = chunk.indexOf(0x5c, i);
        const end = Math.min(quote === -1 ? chunk.length : quote, slash === -1 ? chunk.length : slash);
        if (end > i) this.base64Text(chunk.toString('latin1', i, end));
        i = end;
        if (i < chunk.length) this.base64Char(chunk[i++]!, out);
        continue;
      }
      const c = chunk[i++]!;
      if (this.b64) this.base64Char(c, out);
      else this.jsonChar(c);
    }
    if (this.run.length >= RUN) out.push(this.flush(this.run.length - (this.run.length % 4)));
    return out;
  }

  finish(): Buffer[] {
    if (this.state !== 'done') throw notJson('the body ends before its closing }');
    if (!this.seen) throw Errors.missingField('base64Data', 'send the file as base64 text or a data: URL');
    return [];
  }

  private jsonChar(c: number): void {
    switch (this.state) {
      case 'start':
        if (WHITE.has(c)) return;
        if (c !== 0x7b) throw notJson('send a JSON object ({"base64Data": "...", "fileName": "..."})');
        this.state = 'key';
        return;
      case 'key':
        if (!this.inString) {
          if (WHITE.has(c)) return;
          if (c === 0x7d && Object.keys(this.fields).length === 0 && !this.seen) return void (this.state = 'done');
          if (c !== 0x22) throw notJson(`expected a field name at ${JSON.stringify(String.fromCharCode(c))}`);
          this.inString = true;
          this.raw = [c];
          return;
        }
        this.raw.push(c);
        if (this.raw.length > 256) throw notJson('a field name is too long');
        if (this.stringEnds(c)) {
          this.key = JSON.parse(Buffer.from(this.raw).toString('utf8')) as string;
          this.state = 'colon';
        }
        return;
      case 'colon':
        if (WHITE.has(c)) return;
        if (c !== 0x3a) throw notJson(`expected ":" after ${JSON.stringify(this.key)}`);
        this.state = 'value';
        this.raw = [];
        return;
      case 'value':
        return this.valueChar(c);
      case 'comma':
        if (WHITE.has(c)) return;
        if (c === 0x2c) return void (this.state = 'key');
        if (c === 0x7d) return void (this.state = 'done');
        throw notJson('expected "," or "}" after a value');
      case 'done':
        if (!WHITE.has(c)) throw notJson('unexpected text after the closing }');
    }
  }

  /** One character of a value other than base64Data's string (kept raw, parsed when it ends). */
  private valueChar(c: number): void {
    if (this.raw.length === 0 && WHITE.has(c)) return;
    if (this.raw.length === 0 && c === 0x22 && this.key === 'base64Data') {
      if (this.seen) throw Errors.invalid('base64Data is given twice');
      this.seen = true;
      this.b64 = 'head';
      this.head = '';
      return;
    }
    if (!this.inString && this.depth === 0 && this.raw.length > 0 && (c === 0x2c || c === 0x7d || WHITE.has(c))) {
      this.endValue();
      if (c === 0x2c) this.state = 'key';
      else if (c === 0x7d) this.state = 'done';
      else this.state = 'comma';
      return;
    }
    this.raw.push(c);
    if (this.raw.length > MAX_OTHER_VALUE) throw Errors.invalid(`${this.key.slice(0, 100)}: the value is too long`);
    if (this.inString) {
      if (this.stringEnds(c) && this.depth === 0) {
        this.endValue();
        this.state = 'comma';
      }
      return;
    }
    if (c === 0x22) this.inString = true;
    else if (c === 0x7b || c === 0x5b) this.depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--this.depth === 0) {
        this.endValue();
        this.state = 'comma';
      }
    }
  }

  /** Whether `c` (pushed already) closes the string being read; tracks backslash escapes. */
  private stringEnds(c: number): boolean {
    if (this.escaped) {
      this.escaped = false;
      return false;
    }
    if (c === 0x5c) {
      this.escaped = true;
      return false;
    }
    if (c === 0x22 && this.raw.length > 1) {
      this.inString = false;
      return true;
    }
    return false;
  }

  private endValue(): void {
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(this.raw).toString('utf8'));
    } catch (e) {
      throw notJson(`the value of ${JSON.stringify(this.key.slice(0, 100))}: ${(e as Error).message}`);
    }
    if (this.key === 'base64Data') throw Errors.invalid(`base64Data: must be a string (got ${shown(value)})`);
    this.fields[this.key] = value;
    this.raw = [];
    this.inString = false;
    this.depth = 0;
  }

  /** One character inside base64Data's string (the run between quotes and backslashes comes in base64Slice). */
  private base64Char(c: number, out: Buffer[]): void {
    if (this.escaped) {
      this.escaped = false;
      // JSON may escape "/" (\/) and carry line breaks (\n): the rest is not base64.
      if (c === 0x2f) return this.base64Text('/');
      if (c === 0x6e || c === 0x72 || c === 0x74) return;
      throw notBase64(`${this.head}\\${String.fromCharCode(c)}`);
    }
    if (c === 0x5c) return void (this.escaped = true);
    if (c === 0x22) return this.endBase64(out);
    this.base64Text(String.fromCharCode(c));
  }

  /** Text of base64Data (no quote or backslash in it): the data: URL's head first, then base64. */
  private base64Text(text: string): void {
    if (this.b64 === 'head') {
      this.head += text;
      const lower = this.head.slice(0, 5).toLowerCase();
      if (!lower.startsWith('data:') && !'data:'.startsWith(lower)) {
        // Not a data: URL: what was kept is base64 text.
        this.b64 = 'body';
        const kept = this.head;
        this.head = '';
        return this.base64Text(kept);
      }
      const comma = this.head.indexOf(',');
      if (comma === -1) {
        if (this.head.length > 200) throw notBase64(this.head);
        return;
      }
      const head = this.head.slice(0, comma + 1);
      if (!/;base64,$/i.test(head)) throw Errors.invalid(`base64Data: a data: URL must be base64-encoded (data:<type>;base64,...) (got ${shown(head)})`);
      this.b64 = 'body';
      const rest = this.head.slice(comma + 1);
      this.head = '';
      return this.base64Text(rest);
    }
    let clean = /\s/.test(text) ? text.replace(/\s+/g, '') : text;
    if (clean === '') return;
    const m = /^[A-Za-z0-9+/_-]*(=*)$/.exec(clean);
    if (!m || (this.padding > 0 && clean.length > 0)) throw notBase64(clean.slice(0, 40));
    if (m[1]) {
      this.padding += m[1].length;
      if (this.padding > 2) throw notBase64(clean.slice(-40));
      clean = clean.slice(0, clean.length - m[1].length);
    }
    this.run += clean;
    this.length += clean.length;
  }

  private endBase64(out: Buffer[]): void {
    if (this.b64 === 'head' && this.head !== '') {
      if (/^data:/i.test(this.head)) throw notBase64(this.head);
      this.b64 = 'body';
      const kept = this.head;
      this.head = '';
      this.base64Text(kept);
    }
    if (this.length === 0) throw Errors.missingField('base64Data', 'send the file as base64 text or a data: URL');
    if (this.run.length > 0) out.push(this.flush(this.run.length));
    this.b64 = null;
    this.state = 'comma';
  }

  /** Decodes the first `n` characters of the waiting run. */
  private flush(n: number): Buffer {
    const text = this.run.slice(0, n);
    this.run = this.run.slice(n);
    return Buffer.from(text, 'base64');
  }
}
