// Revokes tokens through every path while a load runs, and counts requests served with a token already revoked.
// node bench/revocation-under-load.js [--store sqlite|postgres|redis] [--seconds 10] [--connections 10]
//   [--clients 10] [--tokens 20] [--users 10] [--grants 4] [--refreshes 2] [--deferred] [--jwt] [--sqlite-instances 1|2]
//
// The servers are bench/server.js children, bearer cache on (the default); with --jwt every access token is a JWT
// (accessTokenFormat 'jwt') and requireBearer runs with jwt: { checkRevocation: true }, so it must refuse a revoked
// JWT through the same cache and feed (B is given A's issuer, which the tokens carry in iss and aud). On SQLite one
// server (instance A) on a file of this run, or two (A and B) on that file with --sqlite-instances 2; on PostgreSQL
// and Redis two, A and B, on one schema / key prefix of this run. With two, the load goes to B, every revocation
// through A or the CLI, so each crosses instances by the store's revocation feed.
// Tokens: --clients client_credentials integrations, registered with the CLI, --tokens access tokens each; and
// for one authorization_code integration, --users users × --grants grants, each grant a code exchanged at A
// (an access and a refresh token) then refreshed --refreshes times (an access token each). --connections
// loops send GET /api/guarded to B back to back, each with a random token of the pool, revoked or not; with
// --deferred every other request goes to GET /api/deferred instead, whose bearer check runs after a middleware
// that defers with setImmediate (the event loop's check phase, as behind express-session's MemoryStore).
// Meanwhile one revocation every 250 ms, cycling through the paths:
//   endpoint  POST /oauth2/revoke of one access token (RFC 7009), at A;
//   cli       `oauth-admin tokens revoke --client` of one client_credentials integration: another process;
//   disable   `oauth-admin clients disable` of one client_credentials integration (its tokens go with it);
//   replay    the code of one grant exchanged again at A (RFC 6749 §4.1.2: its tokens SHOULD be revoked);
//   refresh   POST /oauth2/revoke of one grant's refresh token at A (RFC 7009 §2.1: the grant goes);
//   cli-user  `oauth-admin tokens revoke --client --user` of one user at the code integration;
//   consent   one user's consent withdrawn at A (oauth.withdrawConsent, what the consents page calls);
//   rotate    `oauth-admin clients rotate-secret` (no --grace) of one client_credentials integration;
//   delete    `oauth-admin clients delete --yes` of one client_credentials integration;
//   user      `oauth-admin tokens revoke --user` of one user (at every integration: one revocation each, the code
//             integration, where its tokens are, among them);
//   admin     oauth.admin.revokeTokens({ userId }) of one user at A (the API an admin page calls).
//   narrow    `oauth-admin clients update --scope` of one client_credentials integration registered without scopes
//             (all-access): a narrowing, which revokes every token of the integration (README, `clients update`).
// A revocation counts from the moment its call returned (response received, CLI process exited). A request
// SENT after that moment and answered 200 is a violation; one sent before and answered after is in flight
// (either answer is right). The run fails (exit 1) on any violation on SQLite, where revocation is exact within
// one request; on PostgreSQL and Redis it reports them with how long after the revocation they were sent (the
// notification latency the README documents), and fails only past --max-lag-ms. No timing assertion in CI.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseCli } from './parse-cli.js';
import { startServer } from './spawn-server.js';
import { tokenRequest } from './token-request.js';
import { benchCode } from './mint-codes.js';
import { benchName, DEFAULT_POSTGRES_URL, DEFAULT_REDIS_URL, deleteRedisPrefix, dropPostgresSchema } from './bench-stores.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const cli = parseCli(import.meta.url, {
  store: { type: 'string', default: 'sqlite' },
  seconds: { type: 'string', default: '10' },
  connections: { type: 'string', default: '10' },
  clients: { type: 'string', default: '10' },
  tokens: { type: 'string', default: '20' },
  users: { type: 'string', default: '10' },
  grants: { type: 'string', default: '4' },
  refreshes: { type: 'string', default: '2' },
  'max-lag-ms': { type: 'string', default: '50' },
  deferred: { type: 'boolean', default: false },
  jwt: { type: 'boolean', default: false },
  'sqlite-instances': { type: 'string', default: '1' },
});
const users = Number(cli.users);
const grantCount = users * Number(cli.grants);

/** Where the store lives, the CLI's OAUTH_STORE for it, the server arguments of each instance, and its removal. */
async function storeSetup() {
  if (cli.store === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-revocation-load-'));
    const file = join(dir, 'oauth.sqlite');
    const args = ['--store', 'sqlite', '--sqlite-file', file];
    // --sqlite-instances 2: two processes on the one file (node:cluster, pm2 -i 2), each revocation made at A or by
    // the CLI reaching B's bearer cache through the file (PRAGMA data_version), within one request as from the CLI.
    const instances = cli['sqlite-instances'] === '2' ? [args, args] : [args];
    return { url: `sqlite:${file}`, instances, remove: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (cli.store === 'postgres') {
    const schema = benchName('pg');
    const args = ['--store', 'postgres', '--pg-url', DEFAULT_POSTGRES_URL, '--pg-schema', schema];
    const url = new URL(DEFAULT_POSTGRES_URL);
    url.searchParams.set('schema', schema);
    return { url: url.href, instances: [args, args], remove: () => dropPostgresSchema(DEFAULT_POSTGRES_URL, schema) };
  }
  if (cli.store === 'redis') {
    const prefix = `${benchName('redis')}:`;
    const args = ['--store', 'redis', '--redis-url', DEFAULT_REDIS_URL, '--redis-prefix', prefix];
    const url = new URL(DEFAULT_REDIS_URL);
    url.searchParams.set('prefix', prefix);
    return { url: url.href, instances: [args, args], remove: () => deleteRedisPrefix(DEFAULT_REDIS_URL, prefix) };
  }
  throw new Error(`unknown --store ${cli.store}`);
}

const setup = await storeSetup();
const env = { ...process.env, OAUTH_STORE: setup.url };
const servers = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(cli.connections) + 4 });

/**
 * One HTTP request on the keep-alive agent: its status and body, and `sentAt`, when the request was handed to the
 * socket ('finish'): a request that waited for a socket is dated by its write, not by the call, so that it cannot
 * count as sent before a revocation it was in fact sent after.
 */
function request(server, method, path, headers, body) {
  return new Promise((resolve, reject) => {
    let sentAt = NaN;
    const req = http.request(`${server.url}${path}`, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString(), sentAt }));
    });
    req.once('finish', () => { sentAt = performance.now(); });
    req.on('error', reject);
    req.end(body);
  });
}

async function oauthAdmin(...args) {
  const { stdout } = await run(process.execPath, [CLI, ...args], { env });
  return stdout;
}

const basicOf = (clientId, secret) => `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const FORM = 'application/x-www-form-urlencoded';

/** POSTs a form to the token or revocation endpoint of `server` as the integration; the parsed answer. */
async function post(server, path, client, form) {
  const answer = await request(server, 'POST', path, { authorization: basicOf(client.clientId, client.secret), 'content-type': FORM }, form);
  return { status: answer.status, json: answer.body ? JSON.parse(answer.body) : null };
}

try {
  // A mints the codes and holds the consent and admin routes; B (the same as A on SQLite) takes the load.
  const jwt = cli.jwt ? ['--token-format', 'jwt', '--jwt-check-revocation'] : [];
  const a = await startServer(['--app', 'oauth', ...setup.instances[0], ...jwt, '--codes', String(grantCount), '--code-users', String(users), ...(cli.deferred && setup.instances.length === 1 ? ['--deferred-route'] : [])]);
  servers.push(a);
  const deferred = cli.deferred ? ['--deferred-route'] : [];
  const b = setup.instances.length > 1 ? await startServer(['--app', 'oauth', ...setup.instances[1], ...jwt, ...(cli.jwt ? ['--issuer', a.url] : []), ...deferred]) : a;
  if (b !== a) servers.push(b);

  /** @type {{ clientId: string, secret: string, tokens: string[] }[]} */
  const clients = [];
  for (let i = 0; i < Number(cli.clients); i += 1) {
    const created = JSON.parse(await oauthAdmin('clients', 'create', '--name', `load ${i}`, '--flow', 'client_credentials', '--json'));
    const client = { clientId: created.client_id ?? created.client?.client_id, secret: created.client_secret, tokens: [] };
    for (let t = 0; t < Number(cli.tokens); t += 1) {
      const r = tokenRequest(client.clientId, client.secret);
      const answer = await request(a, 'POST', '/oauth2/token', r.headers, r.body);
      if (answer.status !== 200) throw new Error(`token request answered ${answer.status}: ${answer.body}`);
      client.tokens.push(JSON.parse(answer.body).access_token);
    }
    clients.push(client);
  }

  const codeClient = { clientId: a.codeClientId, secret: a.codeClientSecret };
  const codeForm = (g) => `grant_type=authorization_code&code=${encodeURIComponent(benchCode(a.codePrefix, a.codeBaseMs, g))}&redirect_uri=${encodeURIComponent(a.redirectUri)}`;
  /** @type {{ index: number, user: string, refreshToken: string, tokens: string[] }[]} */
  const grants = [];
  for (let g = 0; g < grantCount; g += 1) {
    const exchanged = await post(a, '/oauth2/token', codeClient, codeForm(g));
    if (exchanged.status !== 200) throw new Error(`code exchange answered ${exchanged.status}: ${JSON.stringify(exchanged.json)}`);
    const grant = { index: g, user: `bench-user-${g % users}`, refreshToken: exchanged.json.refresh_token, tokens: [exchanged.json.access_token] };
    for (let r = 0; r < Number(cli.refreshes); r += 1) {
      const refreshed = await post(a, '/oauth2/token', codeClient, `grant_type=refresh_token&refresh_token=${encodeURIComponent(grant.refreshToken)}`);
      if (refreshed.status !== 200) throw new Error(`refresh answered ${refreshed.status}: ${JSON.stringify(refreshed.json)}`);
      grant.tokens.push(refreshed.json.access_token);
    }
    grants.push(grant);
  }

  const all = [
    ...clients.flatMap((c) => c.tokens.map((token) => ({ token, client: c }))),
    ...grants.flatMap((g) => g.tokens.map((token) => ({ token, client: codeClient }))),
  ];
  // A JWT is three base64url parts; an opaque token one: --jwt must not measure opaque tokens by mistake.
  if (all.some(({ token }) => (token.split('.').length === 3) !== cli.jwt)) throw new Error(`not every access token is ${cli.jwt ? 'a JWT' : 'opaque'}`);
  /** token → performance.now() when the call that revoked it returned, and by which path. */
  const revokedAt = new Map();
  const markRevoked = (tokens, path) => {
    const at = performance.now();
    for (const token of tokens) if (!revokedAt.has(token)) revokedAt.set(token, { at, path });
  };
  const log = []; // [token, sentAt, answeredAt, status]

  const endAt = performance.now() + Number(cli.seconds) * 1000;
  let sent = 0;
  async function load() {
    while (performance.now() < endAt) {
      const { token } = all[Math.floor(Math.random() * all.length)];
      const path = cli.deferred && (sent++ % 2 === 1) ? '/api/deferred' : '/api/guarded';
      const { status, sentAt } = await request(b, 'GET', path, { authorization: `Bearer ${token}` });
      log.push([token, sentAt, performance.now(), status]);
    }
  }

  // Each queue is taken from the front, so no target is revoked twice by the same path.
  const wholeClients = [...clients];
  const liveGrants = [...grants].sort(() => Math.random() - 0.5);
  const liveUsers = Array.from({ length: users }, (_, u) => `bench-user-${u}`);
  /** A grant none of whose tokens is revoked yet, so that what its revocation stops is its own doing. */
  const nextGrant = () => {
    for (let grant = liveGrants.shift(); grant; grant = liveGrants.shift()) {
      if (!grant.tokens.some((token) => revokedAt.has(token))) return grant;
    }
    return null;
  };
  /** A path that revokes every token of one client_credentials integration by an `oauth-admin` command. */
  const revokeWholeClient = async (path, command) => {
    const target = wholeClients.shift();
    if (!target) return false;
    await oauthAdmin(...command(target.clientId));
    markRevoked(target.tokens, path);
    return true;
  };
  const paths = {
    async endpoint() {
      const live = all.filter(({ token }) => !revokedAt.has(token));
      const pick = live[Math.floor(Math.random() * live.length)];
      if (!pick) return false;
      const answer = await post(a, '/oauth2/revoke', pick.client, `token=${pick.token}&token_type_hint=access_token`);
      if (answer.status !== 200) throw new Error(`revocation answered ${answer.status}: ${JSON.stringify(answer.json)}`);
      markRevoked([pick.token], 'endpoint');
      return true;
    },
    cli: () => revokeWholeClient('cli', (id) => ['tokens', 'revoke', '--client', id]),
    disable: () => revokeWholeClient('disable', (id) => ['clients', 'disable', id]),
    async replay() {
      const grant = nextGrant();
      if (!grant) return false;
      const answer = await post(a, '/oauth2/token', codeClient, codeForm(grant.index));
      if (answer.status !== 400 || answer.json?.error !== 'invalid_grant') throw new Error(`a replayed code answered ${answer.status}: ${JSON.stringify(answer.json)}`);
      markRevoked(grant.tokens, 'replay');
      return true;
    },
    async refresh() {
      const grant = nextGrant();
      if (!grant) return false;
      const answer = await post(a, '/oauth2/revoke', codeClient, `token=${encodeURIComponent(grant.refreshToken)}&token_type_hint=refresh_token`);
      if (answer.status !== 200) throw new Error(`refresh token revocation answered ${answer.status}: ${JSON.stringify(answer.json)}`);
      markRevoked(grant.tokens, 'refresh');
      return true;
    },
    async 'cli-user'() {
      const user = liveUsers.shift();
      if (!user) return false;
      await oauthAdmin('tokens', 'revoke', '--client', codeClient.clientId, '--user', user);
      markRevoked(grants.filter((g) => g.user === user).flatMap((g) => g.tokens), 'cli-user');
      return true;
    },
    async consent() {
      const user = liveUsers.shift();
      if (!user) return false;
      const answer = await request(a, 'POST', `/__bench/withdraw-consent?user=${encodeURIComponent(user)}`, {});
      if (answer.status !== 200) throw new Error(`consent withdrawal answered ${answer.status}: ${answer.body}`);
      markRevoked(grants.filter((g) => g.user === user).flatMap((g) => g.tokens), 'consent');
      return true;
    },
    rotate: () => revokeWholeClient('rotate', (id) => ['clients', 'rotate-secret', id]),
    delete: () => revokeWholeClient('delete', (id) => ['clients', 'delete', id, '--yes']),
    async user() {
      const user = liveUsers.shift();
      if (!user) return false;
      await oauthAdmin('tokens', 'revoke', '--user', user);
      markRevoked(grants.filter((g) => g.user === user).flatMap((g) => g.tokens), 'user');
      return true;
    },
    narrow: () => revokeWholeClient('narrow', (id) => ['clients', 'update', id, '--scope', 'bench:narrowed']),
    async admin() {
      const user = liveUsers.shift();
      if (!user) return false;
      const answer = await request(a, 'POST', `/__bench/revoke-user-tokens?user=${encodeURIComponent(user)}`, {});
      if (answer.status !== 200) throw new Error(`oauth.admin.revokeTokens answered ${answer.status}: ${answer.body}`);
      markRevoked(grants.filter((g) => g.user === user).flatMap((g) => g.tokens), 'admin');
      return true;
    },
  };
  const names = Object.keys(paths);
  const done = Object.fromEntries(names.map((p) => [p, 0]));
  async function revoke() {
    for (let n = 0; performance.now() < endAt - 500; n += 1) {
      const path = names[n % names.length];
      if (await paths[path]()) done[path] += 1;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  await Promise.all([revoke(), ...Array.from({ length: Number(cli.connections) }, load)]);

  const rows = Object.fromEntries(names.map((p) => [p, { after: 0, refused: 0, violations: 0, worstLagMs: 0, inFlight200: 0 }]));
  for (const [token, sentAt, answeredAt, status] of log) {
    const revoked = revokedAt.get(token);
    if (!revoked) continue;
    const row = rows[revoked.path];
    if (sentAt > revoked.at) {
      row.after += 1;
      if (status === 200) {
        row.violations += 1;
        row.worstLagMs = Math.max(row.worstLagMs, sentAt - revoked.at);
      } else if (status === 401) row.refused += 1;
    } else if (answeredAt > revoked.at && status === 200) row.inFlight200 += 1;
  }
  const total = log.length;
  const ok = log.filter((l) => l[3] === 200).length;
  const where = `${b === a ? 'one instance' : 'two instances (load on B; revocations through A and the CLI)'}${cli.deferred ? ', half the bearer checks deferred to the check phase' : ''}${cli.jwt ? ', JWT access tokens with jwt.checkRevocation' : ''}`;
  console.log(`express-oauth-router revocation under load: Node ${process.version}, ${cli.store}, ${where}, ${cli.connections} connections, ${cli.seconds} s`);
  console.log(`${clients.length} client_credentials integrations × ${cli.tokens} tokens; ${grantCount} code grants (${users} users) × ${1 + Number(cli.refreshes)} access tokens`);
  console.log(`${total} requests (${(total / Number(cli.seconds)).toFixed(0)} req/s), ${ok} answered 200, ${total - ok} refused\n`);
  console.log('| path | revocations | requests sent after their token was revoked | refused 401 | served 200 (violations) | latest violation, ms after the revocation | 200 while in flight |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const p of names) {
    const r = rows[p];
    console.log(`| ${p} | ${done[p]} | ${r.after} | ${r.refused} | ${r.violations} | ${r.violations ? r.worstLagMs.toFixed(1) : '–'} | ${r.inFlight200} |`);
  }
  const violations = Object.values(rows).reduce((sum, r) => sum + r.violations, 0);
  const worst = Math.max(0, ...Object.values(rows).map((r) => r.worstLagMs));
  if (violations > 0) {
    console.error(`\n${violations} request(s) sent after a revocation had returned were served with the revoked token, the latest ${worst.toFixed(1)} ms after it`);
    if (cli.store === 'sqlite' || worst > Number(cli['max-lag-ms'])) process.exitCode = 1;
  }
  const missing = names.filter((p) => done[p] === 0);
  if (missing.length > 0) {
    console.error(`\nno revocation ran through: ${missing.join(', ')} (a longer --seconds, or more --clients / --users)`);
    process.exitCode = 1;
  }
} finally {
  agent.destroy();
  for (const server of servers.reverse()) await server.stop();
  await setup.remove();
}
