import type { Kysely } from 'kysely';
import type { Dialect } from '../db.js';
import * as m001 from './001_foundation.js';

export interface Migration {
  version: number;
  name: string;
  up(db: Kysely<any>, dialect: Dialect): Promise<void>;
}

/** Every migration in order. Add a numbered file and a line here; never edit a released one. */
export const MIGRATIONS: Migration[] = [{ version: 1, name: 'foundation', up: m001.up }];
