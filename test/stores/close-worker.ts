// Child process of close-releases-handles.test.ts: opens a store, works it, closes it, and must then exit by itself.
import { randomBytes } from 'node:crypto';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import type { CompleteStore, TokenRecord } from '../../src/stores/contract.js';

const [kind = '', target = ''] = process.argv.slice(2);

async function open(): Promise<CompleteStore & { close(): Promise<void>; sweepExpired(): Promise<void> }> {
  // A short interval, so that a sweep timer is armed (and maybe running) when close() comes.
  if (kind === 'memory') return createMemoryStore({ sweepIntervalSeconds: 0.05 });
  if (kind === 'sqlite') return createSqliteStore({ filename: target, sweepIntervalSeconds: 0.05 });
  if (kind === 'postgres') return createPostgresStore({ connectionString: process.env.OAUTH_TEST_POSTGRES_URL ?? '', schema: target, sweepIntervalSeconds: 0.05 });
  if (kind === 'redis') return createRedisStore({ url: process.env.OAUTH_TEST_REDIS_URL ?? '', prefix: target, sweepIntervalSeconds: 0.05 });
  throw new Error(`unknown store ${kind}`);
}

const store = await open();
const now = Date.now();
const record = (expiresAt: number, grantId: string): TokenRecord => ({
  tokenHash: randomBytes(32).toString('base64url'), grantId, clientId: 'close-client', userId: 'close-user',
  scope: ['a'], issuer: 'http://close.test', expiresAt: new Date(expiresAt),
});
for (let i = 0; i < 2000; i++) {
  const grantId = `g${i}`;
  await store.tokens.saveTokens(record(now + (i % 2 ? 50 : 60_000), grantId), record(now + 60_000, grantId), { authorizedAt: new Date(now) });
}
await store.tokens.revokeGrant('g1');
await new Promise((resolve) => setTimeout(resolve, 120));
// A sweep under way (the timer's, or this one) when close() is called: close waits for its current batch.
void store.sweepExpired();
await store.close();
process.send?.({ closed: true });
process.disconnect?.();
// No process.exit: the parent checks that nothing (timer, socket, listener) keeps this process alive.
