// The routers a process counts among those sharing a host's session: one answer kept ("more than one?"), not every issuer ever made.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { registerSharedSessionOwner } from '../../src/http/oauth-session.js';

/** Routers of distinct issuers a host making them on demand (a tenant each, one per test or reload) may create. */
const ROUTERS = 100_000;

describe('the count of routers that may share a host session (README "Embedding in your app")', () => {
  it(`keeps no memory per router: ${ROUTERS} routers of distinct issuers leave the heap as it was`, async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const settle = async () => {
      for (let round = 0; round < 3; round += 1) {
        await new Promise((resolve) => setImmediate(resolve));
        gc();
      }
      return process.memoryUsage().heapUsed;
    };
    // Warm: the first registration of the process decides the rest.
    registerSharedSessionOwner('https://auth.example.com');
    const before = await settle();
    // Issuers of 200 characters, each a string of its own: kept, they hold about 20 MB.
    for (let i = 0; i < ROUTERS; i += 1) registerSharedSessionOwner(`https://auth.example.com/t/${String(i).padStart(172, '0')}`);
    const grown = (await settle()) - before;
    expect(grown).toBeLessThan(2 * 1024 * 1024);
  });
});
