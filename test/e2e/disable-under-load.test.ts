// Disabling or re-keying an integration from outside (the admin CLI, a third process) while two example-app
// instances on one store keep issuing it tokens: every token obtained before or during the change is dead on
// both instances afterwards, later requests are refused, and nothing answers 5xx.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bannerExport, runAdminCli, startAppProcesses, stopAppProcesses, type AppProcess } from '../helpers/example-app-processes.js';
import { basicAuth, burstAround, countByPhase, requestToken, tryTokens, type TokenAnswer } from '../helpers/token-burst.js';

const PG_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!PG_URL || !REDIS_URL) {
  console.info(`Disable-under-load tests run on SQLite only: set ${[
    ...(PG_URL ? [] : ['OAUTH_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test']),
    ...(REDIS_URL ? [] : ['OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379']),
  ].join(' and ')} to run them on those too`);
}

/** The demo client_credentials integration (example-app/seed.ts registers it under this fixed id). */
const DEMO_ID = 'acme-sign-demo-backend';
/** Accepts a client_credentials token with envelopes:read (example-app/envelopes.ts). */
const API = '/api/v1/envelopes';
/** 8 loops over both instances; the CLI starts after 24 tokens; each loop sends 4 requests after it exits. */
const BURST = { loops: 8, startAfterTokens: 24, roundsAfter: 4, maxRounds: 5000 };
// A bound, not a timing assertion: on a loaded machine the CLI alone can take seconds to start.
const TEST_LIMIT_MS = 60_000;
const unique = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

function withParam(url: string, param: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${param}`;
}

const sqliteFile = join(tmpdir(), `oauth-disable-${unique}.sqlite`);

/** Each backend: a store URL no other test shares, and how to remove what the test left there. */
const BACKENDS = [
  {
    name: 'SQLite file',
    enabled: true,
    storeUrl: `sqlite:${sqliteFile}`,
    async cleanup() {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${sqliteFile}${suffix}`, { force: true });
    },
  },
  {
    name: 'PostgreSQL',
    enabled: Boolean(PG_URL),
    storeUrl: withParam(PG_URL, `schema=oauth_disable_${unique}`),
    async cleanup() {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "oauth_disable_${unique}" CASCADE`);
      await admin.end();
    },
  },
  {
    name: 'Redis',
    enabled: Boolean(REDIS_URL),
    storeUrl: withParam(REDIS_URL, `prefix=oauth-disable-${unique}:`),
    async cleanup() {
      const admin = createClient({ url: REDIS_URL });
      await admin.connect();
      for await (const keys of admin.scanIterator({ MATCH: `oauth-disable-${unique}:*`, COUNT: 500 })) {
        if (keys.length) await admin.del(keys);
      }
      admin.destroy();
    },
  },
];

/** "phase status error" → how many answers, e.g. { 'during 400 invalid_grant': 3 }. */
function tally(rows: readonly { phase?: string | undefined; status: number; error: string | null }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const row of rows) {
    const key = [row.phase, row.status, row.error].filter((part) => part !== undefined && part !== null).join(' ');
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/**
 * The failure limit of client authentication (RFC 6819 §5.1.4.2.2): once one source has failed often enough,
 * its requests are answered 429 temporarily_unavailable instead of 401; a refusal all the same.
 */
const throttled = (a: { status: number; error: string | null }): boolean => a.status === 429 && a.error === 'temporarily_unavailable';

const refused = (a: TokenAnswer): boolean =>
  (a.status === 401 && a.error === 'invalid_client') || (a.status === 400 && a.error === 'invalid_grant') || throttled(a);

for (const backend of BACKENDS) {
  describe.skipIf(!backend.enabled)(`the demo integration under load on two example-app instances on one ${backend.name}`, () => {
    let a: AppProcess | undefined;
    let b: AppProcess | undefined;
    /** The demo integration's current secret: from the first-start banner, then from rotate-secret. */
    let secret = '';
    const bases = (): string[] => [a!.base, b!.base];

    beforeAll(async () => {
      const env = ([portA]: number[]) => ({
        OAUTH_STORE: backend.storeUrl, SESSION_SECRET: 'one-session-secret-for-every-instance',
        DEMO_PASSWORD: 'disable-under-load-password', AUTH_URL: `http://127.0.0.1:${portA}`, TRUST_PROXY: 'loopback',
      });
      // Started together on an empty store: one of them registers the demo integrations, and shows the secret (the
      // store is emptied again before a start that lost a port is made again).
      [a, b] = await startAppProcesses(2, env, { beforeRetry: () => backend.cleanup() });
      const creator = [a, b].filter((app) => bannerExport(app.banner, 'CC_CLIENT_SECRET') !== null);
      expect(creator).toHaveLength(1);
      expect(bannerExport(creator[0]!.banner, 'CC_CLIENT_ID')).toBe(DEMO_ID);
      secret = bannerExport(creator[0]!.banner, 'CC_CLIENT_SECRET')!;
    });

    afterAll(async () => {
      await stopAppProcesses();
      await backend.cleanup();
    });

    /**
     * RFC 7009 §2.1 / RFC 6749 §10.4: whatever the burst obtained, before, while or after the CLI ran, is dead
     * on both instances; requests sent before the CLI started all succeeded, requests sent after it exited
     * were all refused (invalid_client, or 429 once the source's failures reached the limit), and the ones in between succeeded or were refused (never a 5xx).
     */
    async function expectEveryTokenDead(answers: readonly TokenAnswer[], label: string): Promise<void> {
      const tokens = answers.flatMap((answer) => (answer.accessToken ? [answer.accessToken] : []));
      const tried = await tryTokens(bases(), API, tokens);
      const phaseOf = new Map(answers.map((answer) => [answer.accessToken, answer.phase]));
      const alive = tried.filter((t) => !(t.status === 401 && t.error === 'invalid_token'));
      console.info(`${backend.name}, ${label}: ${JSON.stringify(countByPhase(answers))} ${JSON.stringify(tally(answers))}; `
        + `${tokens.length} tokens tried on both instances, ${alive.length} answers not invalid_token`);

      expect(tally(answers.filter((x) => x.status !== 200 && !refused(x))), 'answers other than 200, 401 invalid_client, 400 invalid_grant').toEqual({});
      expect(tally(answers.filter((x) => x.phase === 'before' && x.status !== 200)), 'refusals before the CLI started').toEqual({});
      expect(countByPhase(answers).before.issued).toBeGreaterThanOrEqual(BURST.startAfterTokens);
      const after = answers.filter((x) => x.phase === 'after');
      expect(after).toHaveLength(BURST.loops * BURST.roundsAfter);
      expect(tally(after.filter((x) => !((x.status === 401 && x.error === 'invalid_client') || throttled(x)))), 'answers after the CLI exited').toEqual({});
      expect(new Set(tokens).size).toBe(tokens.length);
      expect(tally(alive.map((t) => ({ phase: phaseOf.get(t.token), status: t.status, error: t.error }))), 'tokens still answering').toEqual({});
    }

    it('rotate-secret from a third process during a burst: every token obtained with the old secret is dead on both instances, the new secret works', async () => {
      const { answers, result: cli } = await burstAround({
        ...BURST, bases: bases(), clientId: DEMO_ID, clientSecret: secret,
        action: () => runAdminCli(backend.storeUrl, ['clients', 'rotate-secret', DEMO_ID, '--json']),
        // Each burst stands for its own client host, so the failure limit one burst reaches does not start the next.
        headers: { 'X-Forwarded-For': '198.51.100.1' },
      });
      expect(cli.code, cli.stderr).toBe(0);
      const rotated = (JSON.parse(cli.stdout) as { client_id: string; client_secret: string });
      expect(rotated.client_id).toBe(DEMO_ID);
      expect(rotated.client_secret).not.toBe(secret);
      await expectEveryTokenDead(answers, 'rotate-secret');

      // RFC 6749 §2.3.1: the new secret authenticates at both instances, and its tokens work at both.
      // Sent as from the integration's own host (TRUST_PROXY=loopback): the burst's failures with the old
      // secret throttled the burst's source, not a client that has the new secret.
      const fromClientHost = { 'X-Forwarded-For': '203.0.113.7' };
      const fresh = await Promise.all(bases().map((base) => requestToken(base, basicAuth(DEMO_ID, rotated.client_secret), fromClientHost)));
      expect(fresh.map((f) => f.status)).toEqual([200, 200]);
      const tried = await tryTokens(bases(), API, fresh.map((f) => f.accessToken!));
      expect(tried.map((t) => t.status)).toEqual([200, 200, 200, 200]);
      secret = rotated.client_secret;
    }, TEST_LIMIT_MS);

    it('disable from a third process during a burst: every token the integration got is dead on both instances, later requests are invalid_client', async () => {
      const { answers, result: cli } = await burstAround({
        ...BURST, bases: bases(), clientId: DEMO_ID, clientSecret: secret,
        action: () => runAdminCli(backend.storeUrl, ['clients', 'disable', DEMO_ID]),
        headers: { 'X-Forwarded-For': '198.51.100.2' },
      });
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toContain(`Disabled ${DEMO_ID}`);
      await expectEveryTokenDead(answers, 'disable');

      const listed = await runAdminCli(backend.storeUrl, ['clients', 'list', '--json']);
      expect(listed.code, listed.stderr).toBe(0);
      const demo = (JSON.parse(listed.stdout) as { client_id: string; disabled: boolean }[]).find((c) => c.client_id === DEMO_ID);
      expect(demo?.disabled).toBe(true);
    }, TEST_LIMIT_MS);
  });
}
