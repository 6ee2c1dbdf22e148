// SQLite store: every prepared statement searches an index for its rows, but the listing of every integration.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { SqliteConnection } from '../../src/stores/sqlite/driver.js';
import { migrateSqliteSchema } from '../../src/stores/sqlite/schema.js';
import { prepareSqliteStatements } from '../../src/stores/sqlite/statements.js';

/** `listClients` reads every integration, in creation order, through its index. */
const SCANS_ALLOWED = new Set(['listClients']);
/** A step of a plan that reads a whole table or index (`SCAN t`, `SCAN t USING INDEX i`), not a constant row. */
const FULL_SCAN = /^SCAN (?!CONSTANT ROW)/;

describe('SQLite store, query plans (DESIGN §3a: one indexed lookup per step)', () => {
  it('every statement but the listing of integrations searches an index, never reads a whole table', () => {
    const db = new Database(':memory:');
    // The driver's own type, as the store holds it (better-sqlite3's overloads are wider than it needs).
    const connection = db as unknown as SqliteConnection;
    try {
      migrateSqliteSchema(db);
      const statements = Object.entries(prepareSqliteStatements(connection)) as [string, { source?: unknown }][];
      let checked = 0;
      for (const [name, statement] of statements) {
        if (typeof statement.source !== 'string' || SCANS_ALLOWED.has(name)) continue;
        const source = statement.source;
        // Every parameter NULL: the plan depends on the statement, not the values.
        const named = [...new Set(source.match(/@\w+/g) ?? [])];
        const params = named.length > 0
          ? [Object.fromEntries(named.map((param) => [param.slice(1), null]))]
          : Array<null>((source.match(/\?/g) ?? []).length).fill(null);
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...params) as { detail: string }[];
        const scans = plan.map((row) => row.detail).filter((detail) => FULL_SCAN.test(detail));
        expect(scans, `${name}: ${source}`).toEqual([]);
        checked += 1;
      }
      expect(checked).toBeGreaterThan(20);
      // The allowed ones do scan: if an index comes to serve them, this list should shrink.
      for (const name of SCANS_ALLOWED) {
        const source = (prepareSqliteStatements(connection) as unknown as Record<string, { source: string }>)[name]!.source;
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...Array<null>((source.match(/\?/g) ?? []).length).fill(null)) as { detail: string }[];
        expect(plan.some((row) => FULL_SCAN.test(row.detail)), name).toBe(true);
      }
    } finally {
      db.close();
    }
  });
});
