// PostgreSQL store across instances: two pools on one schema racing codes, client changes and revocations.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../src/stores/postgres/index.js';
import { buildClient, buildCode, buildToken, buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { expectAllGone, saveWhile, withTwoInstances, type InstancePair } from '../helpers/store-races.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
if (!url) console.info('PostgreSQL race tests skipped: set OAUTH_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test to run them');

/** Rounds of each cross-instance race: every round must leave nothing of what was revoked. */
const RACE_ROUNDS = 40;
/** Four savers per race, all started before the revocation, so saves land between its statements. */
const SAVERS = { workers: 4, saveFirst: true };

let counter = 0;
/** A schema name no other test (or parallel test file) uses, so every store starts empty. */
function freshSchema(): string {
  counter += 1;
  return `oauth_t${process.pid}_${counter}_${Math.random().toString(36).slice(2, 8)}`;
}

const admin = url ? new pg.Pool({ connectionString: url, max: 4 }) : null;
const now = () => new Date();

async function dropSchema(schema: string): Promise<void> {
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** Two instances are two pools on one schema, dropped after the test. */
const POSTGRES_PAIR: InstancePair<PostgresStore> = {
  freshNamespace: freshSchema,
  open: (schema) => createPostgresStore({ connectionString: url, schema, sweepIntervalSeconds: 0 }),
  wipe: dropSchema,
};

describe.skipIf(!url)('PostgreSQL store', () => {
  afterAll(async () => {
    await admin?.end();
  });

  describe('across instances', () => {
    it('of 50 concurrent consumeCode calls spread over two instances exactly one wins', async () => {
      await withTwoInstances(POSTGRES_PAIR, async (a, b) => {
        const code = buildCode();
        await a.codes.saveCode(code);
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).codes.consumeCode(code.codeHash)),
        );
        expect(results.filter((r) => r.kind === 'consumed')).toHaveLength(1);
        expect(results.filter((r) => r.kind === 'replayed')).toHaveLength(49);
      });
    });

    it('what one instance writes, another reads; a revocation on one is seen by the other', async () => {
      await withTwoInstances(POSTGRES_PAIR, async (a, b) => {
        const { client } = buildClient();
        expect(await a.clients.createClient(client)).toBe(true);
        expect(await b.clients.createClient(client)).toBe(false);
        expect(await b.clients.findClient(client.clientId)).toEqual(client);
        const access = buildToken();
        expect(await a.tokens.saveTokens(access, null, { authorizedAt: now() })).toBe(true);
        expect(await b.tokens.findAccessToken(access.tokenHash)).toEqual(access);
        await b.tokens.revokeGrant(access.grantId);
        expect(await a.tokens.findAccessToken(access.tokenHash)).toBeNull();
        expect(await a.tokens.saveTokens(buildToken({ grantId: access.grantId }), null, { authorizedAt: now() })).toBe(false);
      });
    });

    it('a disable and a secret rotation racing on two instances both take effect', async () => {
      await withTwoInstances(POSTGRES_PAIR, async (a, b) => {
        for (let round = 0; round < 20; round++) {
          const { client } = buildClient();
          await a.clients.createClient(client);
          await Promise.all([
            a.clients.updateClient(client.clientId, { disabled: true }),
            b.clients.updateClient(client.clientId, { clientSecretHash: `rotated-${round}` }),
          ]);
          const found = await a.clients.findClient(client.clientId);
          expect(found).toMatchObject({ disabled: true, clientSecretHash: `rotated-${round}`, name: client.name });
        }
      });
    });

    it(`saveTokens racing revokeClientTokens(clientId) on another instance leaves no token of the integration (${RACE_ROUNDS} rounds)`, async () => {
      await withTwoInstances(POSTGRES_PAIR, async (a, b) => {
        let accepted = 0;
        let refused = 0;
        for (let round = 0; round < RACE_ROUNDS; round++) {
          const clientId = `client-${round}`;
          const authorizedAt = now();
          let n = 0;
          const make = () => {
            n += 1;
            return n % 3 === 0
              ? { access: buildToken({ clientId, userId: null }), refresh: null }
              : buildTokenPair({ clientId, userId: `user-${n % 2}` });
          };
          const outcome = await saveWhile(a, () => b.tokens.revokeClientTokens(clientId), make, { authorizedAt, ...SAVERS });
          await expectAllGone([a, b], outcome.tried);
          accepted += outcome.accepted;
          refused += outcome.refused;
        }
        // Both sides of the race were reached: saves the revocation deleted, and saves its tombstone refused.
        expect(accepted).toBeGreaterThan(0);
        expect(refused).toBeGreaterThan(0);
      });
    });

    it(`saveTokens racing revokeClientTokens(clientId, userId) on another instance leaves no token of the user (${RACE_ROUNDS} rounds)`, async () => {
      await withTwoInstances(POSTGRES_PAIR, async (a, b) => {
        for (let round = 0; round < RACE_ROUNDS; round++) {
          const clientId = `client-${round}`;
          const authorizedAt = now();
          const outcome = await saveWhile(
            a,
            () => b.tokens.revokeClientTokens(clientId, 'user-x'),
            () => buildTokenPair({ clientId, userId: 'user-x' }),
            { authorizedAt, ...SAVERS },
          );
          await expectAllGone([a, b], outcome.tried);
        }
        // Another user's tokens at the integration are untouched.
        const other = buildTokenPair({ clientId: 'client-0', userId: 'user-y' });
        expect(await a.tokens.saveTokens(other.access, other.refresh, { authorizedAt: now() })).toBe(true);
        await b.tokens.revokeClientTokens('client-0', 'user-x');
        expect(await a.tokens.findRefreshToken(other.refresh.tokenHash)).toEqual(other.refresh);
      });
    });

    it(`saveTokens racing revokeGrant on another instance leaves no token of the grant (${RACE_ROUNDS} rounds)`, async () => {
      await withTwoInstances(POSTGRES_PAIR, async (a, b) => {
        for (let round = 0; round < RACE_ROUNDS; round++) {
          const grantId = `grant-${round}`;
          const outcome = await saveWhile(
            a,
            () => b.tokens.revokeGrant(grantId),
            () => buildTokenPair({ grantId, clientId: 'client', userId: 'user' }),
            { authorizedAt: now(), ...SAVERS },
          );
          await expectAllGone([a, b], outcome.tried);
        }
      });
    });

    it('a host pool defaulting to SERIALIZABLE still saves, revokes and refuses exactly (each transaction asks for READ COMMITTED)', async () => {
      const schema = freshSchema();
      const pool = new pg.Pool({ connectionString: url, options: '-c default_transaction_isolation=serializable' });
      try {
        const store = await createPostgresStore({ pool, schema, sweepIntervalSeconds: 0 });
        const { access, refresh } = buildTokenPair();
        const authorizedAt = now();
        expect(await store.tokens.saveTokens(access, refresh, { authorizedAt })).toBe(true);
        await store.tokens.revokeClientTokens(access.clientId);
        await expectAllGone([store], [access, refresh]);
        const late = buildTokenPair({ clientId: access.clientId });
        expect(await store.tokens.saveTokens(late.access, late.refresh, { authorizedAt })).toBe(false);
        await store.close();
      } finally {
        await pool.end();
        await dropSchema(schema);
      }
    });
  });
});
