// The memory store passes the conformance suite and keeps no shared references or module-level state.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { buildClient, buildCode, buildTokenPair } from '../../src/testing/conformance-fixtures.js';

runStoreConformance({ name: 'memory', createStore: () => createMemoryStore() });

describe('memory store specifics', () => {
  it('two stores share nothing (no module-level state)', async () => {
    const a = createMemoryStore();
    const b = createMemoryStore();
    const { client } = buildClient();
    await a.clients.createClient?.(client);
    expect(await b.clients.findClient(client.clientId)).toBeNull();
    await Promise.all([a.close?.(), b.close?.()]);
  });

  it('records are copies: changing a saved or returned object does not change the store', async () => {
    const store = createMemoryStore();
    const { client } = buildClient();
    const mutable = { ...client, redirectUris: [...client.redirectUris] };
    await store.clients.createClient?.(mutable);
    mutable.redirectUris.push('https://evil.example.com/cb');
    const found = await store.clients.findClient(client.clientId);
    (found?.redirectUris as string[]).push('https://evil.example.com/cb');
    expect(await store.clients.findClient(client.clientId)).toEqual(client);
    await store.close?.();
  });

  it('answers asynchronously: a save is not visible before its promise settles', async () => {
    const store = createMemoryStore();
    const code = buildCode();
    const saving = store.codes.saveCode(code);
    let settled = false;
    void saving.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await saving;
    expect((await store.codes.consumeCode(code.codeHash)).kind).toBe('consumed');
    await store.close?.();
  });

  it('rejects calls after close()', async () => {
    const store = createMemoryStore();
    await store.close?.();
    await expect(store.tokens.findAccessToken(buildTokenPair().access.tokenHash)).rejects.toThrow(/closed/);
  });
});
