import type { MediaFacts, MediaFact } from '../catalog/index.js';
import type { Clock } from '../clock.js';
import type { Database } from '../store/index.js';
import { linkName } from './files.js';

/** Finds the facts (kind, format, whole seconds) of the media links in a createTask input. */
export interface MediaFactsResolver {
  resolve(accountId: string, input: unknown): Promise<MediaFacts>;
}

/** Every string in the input (top level and inside lists) that is a link to one of our files. */
function fileLinks(input: unknown, prefix: string): string[] {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return [];
  const out: string[] = [];
  for (const value of Object.values(input)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v === 'string' && v.startsWith(prefix) && out.length < 100) out.push(v);
    }
  }
  return out;
}

/**
 * Facts from the upload rows of the `files` table (issue 5 inserts them when a file is uploaded):
 * only the account's own uploads that have not expired count; anything else gets no fact, which
 * validation refuses for video and audio links.
 */
export class UploadFacts implements MediaFactsResolver {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly publicBaseUrl: string,
  ) {}

  async resolve(accountId: string, input: unknown): Promise<MediaFacts> {
    const prefix = `${this.publicBaseUrl}/files/`;
    const links = fileLinks(input, prefix);
    if (links.length === 0) return {};
    const ids = new Map<string, string>();
    for (const link of links) {
      const [id, name] = link.slice(prefix.length).split('/');
      if (id && name) ids.set(link, id);
    }
    if (ids.size === 0) return {};
    const rows = await this.database.db
      .selectFrom('files')
      .select(['id', 'name', 'kind', 'format', 'seconds'])
      .where('id', 'in', [...new Set(ids.values())])
      .where('account_id', '=', accountId)
      .where('purpose', '=', 'upload')
      .where('deleted_at', 'is', null)
      .where('expires_at', '>', this.clock.now())
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    const facts: Record<string, MediaFact> = {};
    for (const [link, id] of ids) {
      const row = byId.get(id);
      if (!row || linkName(link) !== row.name) continue;
      facts[link] = {
        ...(row.kind ? { kind: row.kind } : {}),
        ...(row.format ? { format: row.format } : {}),
        ...(row.seconds !== null ? { seconds: Number(row.seconds) } : {}),
      };
    }
    return facts;
  }
}
