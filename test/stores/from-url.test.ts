// createStoreFromUrl: the OAUTH_STORE syntax picks the store; bad URLs fail with a clear, secret-free message.
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStoreFromUrl, DEFAULT_STORE_URL } from '../../src/stores/from-url.js';
import { buildClient } from '../../src/testing/conformance-fixtures.js';
import type { Store } from '../../src/stores/contract.js';

const opened: Store[] = [];
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-from-url-'));
  dirs.push(dir);
  return dir;
}

async function open(url: string): Promise<Store> {
  const store = await createStoreFromUrl(url);
  opened.push(store);
  return store;
}

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close?.();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('createStoreFromUrl', () => {
  it('DEFAULT_STORE_URL is the SQLite file under ./data', () => {
    expect(DEFAULT_STORE_URL).toBe('sqlite:./data/oauth.sqlite');
  });

  it('memory: opens an empty in-memory store', async () => {
    const store = await open('memory:');
    expect(await store.clients.listClients()).toEqual([]);
  });

  it('sqlite:/abs/path opens that file and creates its missing parent directory', async () => {
    const file = join(tempDir(), 'nested', 'dir', 'oauth.sqlite');
    const store = await open(`sqlite:${file}`);
    const { client } = buildClient();
    await store.clients.saveClient(client);
    expect(existsSync(file)).toBe(true);
  });

  it('sqlite:./relative resolves against the working directory', async () => {
    const file = join(tempDir(), 'rel.sqlite');
    await open(`sqlite:${relative(process.cwd(), file)}`);
    expect(existsSync(file)).toBe(true);
  });

  it('sqlite:///abs/path (URL style) is read as the absolute path', async () => {
    const file = join(tempDir(), 'url-style.sqlite');
    await open(`sqlite://${file}`);
    expect(existsSync(file)).toBe(true);
  });

  it('the scheme is case-insensitive and surrounding spaces are ignored', async () => {
    const store = await open('  MEMORY:  ');
    expect(await store.clients.listClients()).toEqual([]);
  });

  it('sqlite: without a path is refused', async () => {
    await expect(createStoreFromUrl('sqlite:')).rejects.toThrow(/file path/);
  });

  it('an unknown scheme fails naming the supported ones', async () => {
    await expect(createStoreFromUrl('mongodb://db/oauth')).rejects.toThrow(
      /unsupported store scheme "mongodb:".*sqlite:PATH.*memory:.*postgres.*redis/,
    );
  });

  it('a URL without a scheme fails without echoing what could be a password', async () => {
    const error = await createStoreFromUrl('//admin:hunter2@db').then(() => null, (e: unknown) => e as Error);
    expect(error?.message).toMatch(/supported: sqlite:PATH/);
    expect(error?.message).not.toContain('hunter2');
    await expect(createStoreFromUrl('./data/oauth.sqlite')).rejects.toThrow(/supported/);
  });
});
