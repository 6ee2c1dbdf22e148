// Two built example-app processes on one PostgreSQL, then on one Redis: one issuer, shared sessions, codes
// redeemable exactly once across instances, tokens valid on both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bannerExport, runAdminCli, sharedStoreBackends, startAppProcesses, stopAppProcesses, type AppProcess,
} from '../helpers/example-app-processes.js';

const PG_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!PG_URL || !REDIS_URL) {
  console.info(`Scale-out tests skipped: set ${[
    ...(PG_URL ? [] : ['OAUTH_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test']),
    ...(REDIS_URL ? [] : ['OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379']),
  ].join(' and ')} to run them`);
}

const USER = { username: 'alice', password: 'scale-out-password-for-tests' };
const SESSION_SECRET = 'one-session-secret-for-every-instance';
const REDIRECT_URI = 'http://127.0.0.1:9/integration/callback';

/** Runs the admin CLI on `storeUrl` and resolves what it printed; rejects when it fails. */
async function adminCli(storeUrl: string, args: readonly string[]): Promise<string> {
  const run = await runAdminCli(storeUrl, args);
  if (run.code !== 0) throw new Error(`oauth-admin ${args.join(' ')} exited with ${run.code}: ${run.stderr}`);
  return run.stdout;
}

function hiddenField(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no hidden field ${name} in page`);
  return match[1]!;
}

/** The session cookie a response set (name=value), or the one sent before. */
function cookieOf(res: Response, previous = ''): string {
  const set = res.headers.getSetCookie().find((c) => c.startsWith('oauth.sid='));
  return set ? set.split(';')[0]! : previous;
}

function form(fields: Record<string, string>): RequestInit {
  return { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields), redirect: 'manual' };
}

for (const backend of sharedStoreBackends('scale')) {
  describe.skipIf(!backend.enabled)(`two example-app instances on one ${backend.name}`, () => {
    let a: AppProcess | undefined;
    let b: AppProcess | undefined;
    let client: { client_id: string; client_secret: string };
    const env = { OAUTH_STORE: backend.storeUrl, SESSION_SECRET, DEMO_USERNAME: USER.username, DEMO_PASSWORD: USER.password };
    const basic = (): string => `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    const query = (): string =>
      new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT_URI, state: 's1', scope: 'envelopes:read' }).toString();

    beforeAll(async () => {
      // One issuer for both: codes and tokens name the issuer they were issued at, as a load balancer would.
      // Started together on an empty store: both race to register the demo integrations (emptied again before a
      // start that lost a port is made again, since the other instance may have registered them).
      [a, b] = await startAppProcesses(2, ([portA]) => ({ ...env, AUTH_URL: `http://127.0.0.1:${portA}` }), { beforeRetry: () => backend.cleanup() });
      const stdout = await adminCli(backend.storeUrl, [
        'clients', 'create', '--name', 'Scale-out CRM', '--flow', 'authorization_code',
        '--redirect-uri', REDIRECT_URI, '--scope', 'envelopes:read', '--json',
      ]);
      client = JSON.parse(stdout) as typeof client;
    });

    afterAll(async () => {
      await stopAppProcesses();
      await backend.cleanup();
    });

    it('instances started together register the demo integrations once: one banner shows secrets', async () => {
      const withSecrets = [a!, b!].filter((i) => i.banner.includes('export CODE_CLIENT_SECRET='));
      expect(withSecrets).toHaveLength(1);
      const winnerId = bannerExport(withSecrets[0]!.banner, 'CODE_CLIENT_ID')!;
      const other = withSecrets[0] === a ? b! : a!;
      expect(other.banner).toContain(`authorization_code: ${winnerId}`);
      expect(other.banner).not.toMatch(/SECRET=/);
      for (const instance of [a!, b!]) expect(instance.banner).toMatch(/sessions: +(postgres|redis) /);
      const stdout = await adminCli(backend.storeUrl, ['clients', 'list', '--json']);
      const active = (JSON.parse(stdout) as { name: string; disabled: boolean }[]).filter((c) => !c.disabled && c.name.startsWith('Acme Sign demo'));
      expect(active.map((c) => c.name).sort()).toEqual(['Acme Sign demo (authorization code)', 'Acme Sign demo (client credentials)']);
    });

    /** Signs in on instance A and returns the session cookie and the page after login (consent or redirect). */
    async function signInOnA(): Promise<{ cookie: string; page: Response }> {
      const login = await fetch(`${a!.base}/oauth2/authorize?${query()}`, { redirect: 'manual' });
      expect(login.status).toBe(200);
      const html = await login.text();
      // Signed out there is no session yet: the login form's CSRF value comes in its own cookie.
      const loginCookie = login.headers.getSetCookie().find((c) => c.startsWith('oauth.sid.csrf='))!.split(';')[0]!;
      const posted = await fetch(`${a!.base}/oauth2/login`, {
        ...form({ csrf_token: hiddenField(html, 'csrf_token'), request_id: hiddenField(html, 'request_id'), ...USER }),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: loginCookie },
      });
      expect(posted.status).toBe(303);
      const cookie = cookieOf(posted);
      const page = await fetch(new URL(posted.headers.get('location')!, a!.base), { headers: { Cookie: cookie }, redirect: 'manual' });
      return { cookie: cookieOf(page, cookie), page };
    }

    function redeem(base: string, code: string): Promise<Response> {
      return fetch(`${base}/oauth2/token`, {
        ...form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic() },
      });
    }

    const me = (base: string, token: string): Promise<Response> =>
      fetch(`${base}/api/v1/me`, { headers: { Authorization: `Bearer ${token}` } });

    it('login on A, consent on B (shared session), code redeemed on B, token valid on A and B, replays refused', async () => {
      const { cookie, page } = await signInOnA();
      expect(page.status).toBe(200);
      const consent = await page.text();
      expect(consent).toContain('name="decision"');
      const decided = await fetch(`${b!.base}/oauth2/consent`, {
        ...form({ csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'), decision: 'allow' }),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
      });
      expect(decided.status).toBe(303);
      const callback = new URL(decided.headers.get('location')!);
      expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
      expect(callback.searchParams.get('iss')).toBe(a!.base);
      const code = callback.searchParams.get('code')!;

      const redeemed = await redeem(b!.base, code);
      const body = (await redeemed.json()) as Record<string, string>;
      expect(redeemed.status, JSON.stringify(body)).toBe(200);
      for (const instance of [a!, b!]) {
        const answer = await me(instance.base, body['access_token']!);
        expect(answer.status).toBe(200);
        expect(await answer.json()).toMatchObject({ client_id: client.client_id, user_id: `user:${USER.username}`, issuer: a!.base });
      }

      for (const instance of [a!, b!]) {
        const replay = await redeem(instance.base, code);
        expect(replay.status).toBe(400);
        expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
      }
      // RFC 6749 §4.1.2: a replayed code revokes what was issued from it, on every instance.
      for (const instance of [a!, b!]) expect((await me(instance.base, body['access_token']!)).status).toBe(401);
    });

    it('50 concurrent redemptions of one code spread over A and B consume it once, and no token of it survives the replays', async () => {
      // The consent above is remembered: the signed-in session on A goes straight to the redirect with a code.
      const { page } = await signInOnA();
      expect(page.status).toBe(302);
      const code = new URL(page.headers.get('location')!).searchParams.get('code')!;
      expect(code).toBeTruthy();

      const answers = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const res = await redeem(i % 2 === 0 ? a!.base : b!.base, code);
          return { status: res.status, body: (await res.json()) as Record<string, string> };
        }),
      );
      const replays = answers.filter((r) => r.status === 400 && r.body['error_description'] === 'authorization code has already been used');
      const winner = answers.filter((r) => !replays.includes(r));
      // consumeCode is atomic across instances: exactly one request consumed the code, 49 saw a replay.
      expect(replays).toHaveLength(49);
      expect(winner).toHaveLength(1);
      // A replay revokes the grant at once: when one overtakes the winner before its save, the store refuses
      // the save (invalid_grant); otherwise the winner answers 200 and its token dies with the replays.
      const outcome = winner[0]!;
      expect([200, 400]).toContain(outcome.status);
      if (outcome.status === 400) {
        expect(outcome.body['error']).toBe('invalid_grant');
        return;
      }
      // RFC 6749 §4.1.2: the replays revoked the grant, so the one token issued stops working everywhere.
      for (const instance of [a!, b!]) expect((await me(instance.base, outcome.body['access_token']!)).status).toBe(401);
    });
  });
}
