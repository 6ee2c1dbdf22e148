// SQLite schema version 6: a file of version 5 gains the previous-secret columns, and its integrations keep working.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateSqliteSchema, SQLITE_SCHEMA_VERSION } from '../../src/stores/sqlite/schema.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';

let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-v6-'));
  file = join(dir, 'oauth.sqlite');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('SQLite schema version 6 (RFC 6749 §2.3.1, RFC 6819 §5.2.3.7)', () => {
  it('an integration written at version 5 reads back without a previous secret, and a grace rotation then round-trips', async () => {
    const db = new Database(file);
    migrateSqliteSchema(db, 5);
    db.prepare(`INSERT INTO clients (client_id, client_secret_hash, name, flow, redirect_uris, allowed_scopes,
      require_pkce, credentials_issued_at, created_at, disabled) VALUES (?, ?, 'Old', 'client_credentials', '[]', '[]', 0, 1, 2, 0)`)
      .run('old-client', hashSecret('old-secret'));
    db.close();

    const store = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
    try {
      const before = await store.clients.findClient('old-client');
      expect(before).not.toBeNull();
      expect(before).not.toHaveProperty('previousClientSecretHash');
      expect(before).not.toHaveProperty('previousClientSecretExpiresAt');
      const until = new Date(Date.now() + 60_000);
      const after = await store.clients.updateClient('old-client', { previousClientSecretHash: before!.clientSecretHash, previousClientSecretExpiresAt: until });
      expect(after).toMatchObject({ previousClientSecretHash: before!.clientSecretHash, previousClientSecretExpiresAt: until });
    } finally {
      await store.close();
    }
    const check = new Database(file);
    expect(check.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    expect(SQLITE_SCHEMA_VERSION).toBeGreaterThanOrEqual(6);
    check.close();
  });
});
