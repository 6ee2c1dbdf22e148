// The memory store's heap bytes per live token: run by bench/scale.js as `node --expose-gc bench/scale-memory.js --tokens N`.
import { parseArgs } from 'node:util';

const { values: cli } = parseArgs({ options: { tokens: { type: 'string', default: '100000' } } });
const count = Number(cli.tokens);
if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
if (!Number.isInteger(count) || count < 1) throw new Error('--tokens must be a positive integer');

const { createMemoryStore } = await import('express-oauth-router/stores/memory');
const { hashSecret } = await import('express-oauth-router');

function settledHeap() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

const store = createMemoryStore();
const issuer = 'http://127.0.0.1:3000';
const authorizedAt = new Date();
const expiresAt = Date.now() + 3_600_000;
// The records are built from fresh strings as a token request builds them; only what the store keeps stays.
const before = settledHeap();
for (let lo = 0; lo < count; lo += 1000) {
  const saves = [];
  for (let i = lo; i < Math.min(count, lo + 1000); i += 1) {
    saves.push(store.tokens.saveTokens({
      tokenHash: hashSecret(`memory-token-${i}`), grantId: hashSecret(`memory-grant-${i}`), clientId: `client-${i % 100}`,
      userId: null, scope: ['bench:read'], issuer, expiresAt: new Date(expiresAt),
    }, null, { authorizedAt }));
  }
  await Promise.all(saves);
}
const after = settledHeap();
const found = await store.tokens.findAccessToken(hashSecret(`memory-token-${count - 1}`));
if (!found) throw new Error('the last token saved is not found');
process.stdout.write(`${JSON.stringify({ tokens: count, heapBefore: before, heapAfter: after, bytesPerToken: (after - before) / count })}\n`);
await store.close?.();
