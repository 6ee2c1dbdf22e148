// createOAuthAdmin().importClients: the programmatic import, on a memory store, with client.created events (issue 11).
import { describe, expect, it } from 'vitest';
import { createOAuthAdmin } from '../../src/admin/create-oauth-admin.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import { parseImportFile } from '../../src/clients/import-file.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { verifyClientSecret } from '../../src/crypto/verify-client-secret.js';

const FILE = [
  '{"client_id":"legacy-1","client_secret":"old one","name":"Legacy","flow":"client_credentials","credentials_issued_at":"2020-12-01"}',
  '{"client_id":"current-1","client_secret":"new one","name":"Current","flow":"client_credentials","credentials_issued_at":"2021-06-01T00:00:00Z"}',
].join('\n');

describe('createOAuthAdmin().importClients', () => {
  it('imports with the original issue dates, publishes client.created for each created row only, and is idempotent', async () => {
    const store = createMemoryStore();
    const events = new OAuthEvents();
    const created: string[] = [];
    events.on('event', (event) => {
      if (event.type === 'client.created') {
        expect(event.imported).toBe(true);
        created.push(event.clientId);
      }
    });
    const admin = createOAuthAdmin(store, { events });
    try {
      const first = await admin.importClients(parseImportFile(FILE, 'jsonl'));
      expect(first.rows.map((r) => r.outcome)).toEqual(['created', 'created']);
      expect(created).toEqual(['legacy-1', 'current-1']);
      const legacy = await admin.getClient('legacy-1');
      expect(legacy?.credentialsIssuedAt.toISOString()).toBe('2020-12-01T00:00:00.000Z');
      expect(await verifyClientSecret(legacy!.clientSecretHash, 'old one')).toBe(true);
      const again = await admin.importClients(parseImportFile(FILE, 'jsonl'));
      expect(again.rows.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged']);
      expect(created).toHaveLength(2);
    } finally {
      await store.close?.();
    }
  });

  it('writes nothing and publishes nothing when a row is invalid, unless skipInvalid', async () => {
    const store = createMemoryStore();
    const events = new OAuthEvents();
    const created: string[] = [];
    events.on('event', (event) => {
      if (event.type === 'client.created') {
        expect(event.imported).toBe(true);
        created.push(event.clientId);
      }
    });
    const admin = createOAuthAdmin(store, { events });
    try {
      const records = parseImportFile(`${FILE}\n{"client_id":"x","client_secret":"y","name":"X","flow":"client_credentials"}`, 'jsonl');
      const refused = await admin.importClients(records);
      expect(refused.refused).toBe(true);
      expect(refused.rows.map((r) => r.outcome)).toEqual(['would_create', 'would_create', 'invalid']);
      expect(await admin.listClients()).toEqual([]);
      expect(created).toEqual([]);
      const skipped = await admin.importClients(records, { skipInvalid: true });
      expect(skipped.rows.map((r) => r.outcome)).toEqual(['created', 'created', 'invalid']);
      expect(created).toEqual(['legacy-1', 'current-1']);
    } finally {
      await store.close?.();
    }
  });

  it("refuses the file's objects themselves (not parseImportFile's rows) with a TypeError that says so, and writes nothing", async () => {
    const store = createMemoryStore();
    const admin = createOAuthAdmin(store);
    try {
      const raw = [{ client_id: 'partner-1', client_secret: 'partner secret 2019', name: 'Partner', flow: 'client_credentials' }];
      // Plain JavaScript, where the types do not stop it.
      const call = admin.importClients(raw as unknown as Parameters<typeof admin.importClients>[0]);
      await expect(call).rejects.toThrow(new TypeError('importClients: records[0] is not a row as parseImportFile returns it '
        + '({ line, fields: { client_id, … } }): parse the file with parseImportFile(text, format), or wrap each object as { line, fields }'));
      await expect(admin.importClients('{"client_id":"x"}' as unknown as Parameters<typeof admin.importClients>[0])).rejects.toThrow(TypeError);
      expect(await admin.listClients()).toEqual([]);
    } finally {
      await store.close?.();
    }
  });
});
