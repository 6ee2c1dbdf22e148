// Two store handles on one SQLite file, PostgreSQL schema or Redis prefix: their rateLimits counters are one
// (concurrent hits from both see each count once), and two routers on them count sign-in and client failures together.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createStoreFromUrl } from '../../src/stores/from-url.js';
import type { CompleteStore } from '../../src/stores/contract.js';
import { createTestApp, USER } from '../helpers/app.js';
import { sharedStoreBackends } from '../helpers/example-app-processes.js';
import { loginAttempt, tokenAttempt } from '../helpers/rate-limit-attempts.js';

const directory = mkdtempSync(join(tmpdir(), 'eor-shared-limits-'));
const backends = [
  { name: 'SQLite', enabled: true, storeUrl: `sqlite:${join(directory, 'oauth.sqlite')}`, cleanup: async () => undefined },
  ...sharedStoreBackends('limits'),
];
afterAll(() => rmSync(directory, { recursive: true, force: true }));

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`rate limits shared through one ${backend.name}`, () => {
    const opened: CompleteStore[] = [];
    const open = async (): Promise<CompleteStore> => {
      const store = await createStoreFromUrl(backend.storeUrl);
      opened.push(store);
      return store;
    };
    afterAll(async () => {
      await Promise.all(opened.map((store) => store.close?.()));
      await backend.cleanup();
    });

    it('40 concurrent hits on one key, half through each store handle, see the counts 1 to 40 once each', async () => {
      const [one, two] = [await open(), await open()];
      const key = `eor:test:shared-${Math.random().toString(36).slice(2)}`;
      const now = new Date();
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? one : two).rateLimits.hit(key, 60_000, now)));
      expect(results.map((r) => r.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect((await one.rateLimits.get(key, now))?.count).toBe(40);
    });

    it('two routers, one per store handle, count failed sign-ins and failed client authentications together', async () => {
      const limits = { loginRateLimit: { max: 3 }, clientAuthRateLimit: { max: 3 } };
      const a = await createTestApp(limits, await open());
      const b = await createTestApp(limits, await open());
      expect([await loginAttempt(a, 'wrong'), await loginAttempt(a, 'wrong')]).toEqual([400, 400]);
      expect([await loginAttempt(b, 'wrong'), await loginAttempt(b, USER.password)]).toEqual([400, 429]);

      const { clientId } = a.credentialsClient;
      for (const t of [a, a, b]) expect(await tokenAttempt(t, clientId, 'wrong')).toBe(401);
      expect(await tokenAttempt(b, clientId, 'wrong')).toBe(429);
    });
  });
}
