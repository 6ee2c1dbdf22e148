// A soak for leaks: a real router (bench/server.js, built dist, started with --expose-gc) under a steady mixed load for
// --minutes, sampling every --sample-seconds its RSS, heap after a full GC, active resources by type, open file
// descriptors, and (--store postgres / redis) its PostgreSQL backends (every backend on --pg-url's database but the
// sampler's: give it a database only this run uses) and Redis connections (the server's own sockets, by ss). Memory and counts only,
// never timings: the load is paced (--rate operations/s, a sign-in being three requests) so that it is the same mix on a
// busy machine, only slower (a schedule that falls behind catches up without waiting, never faster than --workers allow).
//   node bench/soak.js --store sqlite --minutes 8
//   node bench/soak.js --store postgres --pg-url postgres://postgres@127.0.0.1:5432/mydb --minutes 8
//   node bench/soak.js --store redis --redis-prefix soak: --minutes 8 --snapshots /tmp/soak   (a prefix given is the
//   caller's: its keys are left, as bench/server.js leaves them; without one a fresh prefix is used and deleted)
// The mix, round robin over --workers loops: client_credentials; a code exchange (pre-minted codes, as bench/run.js);
// a refresh_token grant; a revocation (access or refresh token); an introspection; requireBearer with a valid, a
// revoked and a made-up token; Basic credentials of a made-up client_id from a made-up X-Forwarded-For (the rate
// limits' counters); an authorize GET that never signs in (a fresh browser each time); a sign-in whose consent page is
// never answered (a session in the router's default store), or a wrong password; a token request whose body is
// cut off mid-way (the socket destroyed) or left unfinished (the 408 of bodyTimeout); every eighth request on a fresh
// connection. Each sample is one JSON line on stdout; at the end, one summary line (answers by op and status, first and
// last sample, growth of the heap after GC and of the descriptors). The server listens on --port (default: any free one);
// --token-format jwt issues JWT access tokens (requireBearer then checks signatures, through its verified-token memory).
// --snapshots DIR writes a heap snapshot after the first sample and one at the end (bench/heap-diff.js compares them).
// The rate-limit counters' own rows and keys are sampled too (do they level off past the windows, or grow with each
// made-up client_id and address?): rows of SQLite's and PostgreSQL's rate_limits table (in a file / schema this run
// makes and removes), keys under the prefix's `rl:` by SCAN on Redis and on each listed cluster node, and the keys of
// the in-process counters (--rate-limits in-process: the store's tier left out) or, on --store memory, all its records.
//   node bench/soak.js --store memory --rate-limit-window-seconds 60 --minutes 6
//   node bench/soak.js --store redis-cluster --redis-cluster-nodes 127.0.0.1:7000,127.0.0.1:7001 --minutes 6
//   node bench/soak.js --store sqlite --rate-limits in-process --minutes 6
// --rate-limit-window-seconds N shortens both limits' windows (300 and 900 s by default), so a run outlasts several.
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCli, failCli } from './parse-cli.js';
import { startServer } from './spawn-server.js';
import { benchCode } from './mint-codes.js';
import {
  DEFAULT_POSTGRES_URL, DEFAULT_REDIS_CLUSTER_NODES, DEFAULT_REDIS_URL, benchName, clusterNodeUrls, countRedisKeys,
  deleteRedisClusterPrefix, deleteRedisPrefix, dropPostgresSchema,
} from './bench-stores.js';

const cli = parseCli(import.meta.url, {
  store: { type: 'string', default: 'sqlite' },
  minutes: { type: 'string', default: '8' },
  rate: { type: 'string', default: '120' },
  workers: { type: 'string', default: '8' },
  'sample-seconds': { type: 'string', default: '30' },
  'pg-url': { type: 'string', default: DEFAULT_POSTGRES_URL },
  'redis-url': { type: 'string', default: DEFAULT_REDIS_URL },
  'redis-prefix': { type: 'string' },
  'redis-cluster-nodes': { type: 'string', default: DEFAULT_REDIS_CLUSTER_NODES },
  'rate-limits': { type: 'string', default: 'store' },
  'rate-limit-window-seconds': { type: 'string' },
  snapshots: { type: 'string' },
  port: { type: 'string', default: '0' },
  mix: { type: 'string' },
  'token-format': { type: 'string', default: 'opaque' },
});
const minutes = Number(cli.minutes);
const rate = Number(cli.rate);
const workers = Number(cli.workers);
const sampleMs = Number(cli['sample-seconds']) * 1000;
if (!(minutes > 0) || !(rate > 0) || !(workers > 0) || !(sampleMs > 0)) failCli('--minutes, --rate, --workers and --sample-seconds must be positive');

// The mix, taken in turn by the workers: one operation per slot of the schedule.
const DEFAULT_MIX = ['clientCredentials', 'codeExchange', 'refresh', 'revoke', 'introspect', 'bearerValid', 'bearerRevoked',
  'bearerGarbage', 'badBasic', 'authorize', 'abortedBody', 'clientCredentials', 'bearerValid', 'bearerValid', 'signIn'];
// --mix signInOnly: sign-ins only (the session store's bound); any comma-separated list of the ops below.
const MIX = cli.mix ? cli.mix.split(',') : DEFAULT_MIX;
// Codes for every exchange the run may make, and a margin.
const codes = Math.ceil((minutes * 60 * rate * MIX.filter((op) => op === 'codeExchange').length) / MIX.length * 1.2) + 100;

const USER = 'soak-user';
const PASSWORD = randomBytes(12).toString('base64url');
const serverArgs = ['--app', 'oauth', '--store', cli.store, '--codes', String(codes), '--trust-proxy', '--user', `${USER}:${PASSWORD}`, '--port', cli.port,
  '--token-format', cli['token-format']];
// The store's place is this run's (a temp file, a schema, a key prefix unless given), so its counters can be counted
// from here; removed at the end, as bench/server.js removes its own.
const removals = [];
let sqliteFile = null;
let pgSchema = null;
let redisPrefix = cli['redis-prefix'];
const redisUrls = cli.store === 'redis-cluster' ? clusterNodeUrls(cli['redis-cluster-nodes']) : [cli['redis-url']];
if (cli.store === 'sqlite') {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-soak-'));
  sqliteFile = join(dir, 'oauth.sqlite');
  serverArgs.push('--sqlite-file', sqliteFile);
  removals.push(() => rmSync(dir, { recursive: true, force: true }));
}
if (cli.store === 'postgres') {
  pgSchema = benchName('pg');
  serverArgs.push('--pg-url', cli['pg-url'], '--pg-schema', pgSchema);
  removals.push(() => dropPostgresSchema(cli['pg-url'], pgSchema));
}
if (cli.store === 'redis' || cli.store === 'redis-cluster') {
  if (!redisPrefix) {
    redisPrefix = `${benchName(cli.store === 'redis' ? 'redis' : 'cluster')}:`;
    const prefix = redisPrefix;
    removals.push(() => (cli.store === 'redis' ? deleteRedisPrefix(cli['redis-url'], prefix) : deleteRedisClusterPrefix(redisUrls, prefix)));
  }
  serverArgs.push('--redis-prefix', redisPrefix);
  if (cli.store === 'redis') serverArgs.push('--redis-url', cli['redis-url']);
  else serverArgs.push('--redis-cluster-nodes', cli['redis-cluster-nodes']);
}
serverArgs.push('--rate-limits', cli['rate-limits']);
if (cli['rate-limit-window-seconds']) serverArgs.push('--rate-limit-window-seconds', cli['rate-limit-window-seconds']);
const server = await startServer(serverArgs, { nodeArgs: ['--expose-gc'], readyTimeoutMs: 600_000 });
const { port, pid } = server;

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: workers });
let sent = 0;
function request(method, path, { headers = {}, body, fresh = false } = {}) {
  sent += 1;
  const agent = fresh || sent % 8 === 0 ? false : keepAlive;
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers: { ...headers, ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) } }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let json = null;
        try {
          json = JSON.parse(text);
        } catch {
          // a page, or empty
        }
        resolve({ status: res.statusCode, json, text, headers: res.headers });
      });
      res.on('error', () => resolve({ status: 0, json: null }));
    });
    req.on('error', () => resolve({ status: 0, json: null }));
    req.end(body);
  });
}
const basic = (id, secret) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const form = 'application/x-www-form-urlencoded';
const ccAuth = basic(server.clientId, server.clientSecret);
const codeAuth = basic(server.codeClientId, server.codeClientSecret);
const cookiesOf = (response) => (response.headers?.['set-cookie'] ?? []).map((cookie) => cookie.split(';')[0]).join('; ');
const randomIp = () => `10.${randomBytes(3).join('.')}`;

// Tokens in play, each list bounded so the client holds what the server should, no more.
const valid = [];
const revoked = [];
const refreshTokens = [];
const keep = (list, item, max = 500) => {
  list.push(item);
  if (list.length > max) list.shift();
};
const pick = (list) => list[Math.floor(Math.random() * list.length)];
let nextCode = 0;
const statuses = {};
const unfinished = new Set();

const ops = {
  async clientCredentials() {
    const r = await request('POST', '/oauth2/token', { headers: { authorization: ccAuth, 'content-type': form }, body: 'grant_type=client_credentials' });
    if (r.json?.access_token) keep(valid, { token: r.json.access_token, auth: ccAuth });
    return r;
  },
  async codeExchange() {
    const code = benchCode(server.codePrefix, server.codeBaseMs, nextCode++);
    const body = `grant_type=authorization_code&code=${encodeURIComponent(code)}&redirect_uri=${encodeURIComponent(server.redirectUri)}`;
    const r = await request('POST', '/oauth2/token', { headers: { authorization: codeAuth, 'content-type': form }, body });
    if (r.json?.access_token) keep(valid, { token: r.json.access_token, auth: codeAuth });
    if (r.json?.refresh_token) keep(refreshTokens, r.json.refresh_token);
    return r;
  },
  async refresh() {
    const token = pick(refreshTokens);
    if (!token) return ops.clientCredentials();
    const r = await request('POST', '/oauth2/token', { headers: { authorization: codeAuth, 'content-type': form }, body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(token)}` });
    if (r.json?.access_token) keep(valid, { token: r.json.access_token, auth: codeAuth });
    return r;
  },
  async revoke() {
    // One in four revokes a refresh token (its grant goes with it), the rest an access token.
    if (Math.random() < 0.25 && refreshTokens.length > 50) {
      const token = refreshTokens.splice(Math.floor(Math.random() * refreshTokens.length), 1)[0];
      return request('POST', '/oauth2/revoke', { headers: { authorization: codeAuth, 'content-type': form }, body: `token=${encodeURIComponent(token)}&token_type_hint=refresh_token` });
    }
    if (valid.length < 20) return ops.clientCredentials();
    const { token, auth } = valid.splice(Math.floor(Math.random() * valid.length), 1)[0];
    const r = await request('POST', '/oauth2/revoke', { headers: { authorization: auth, 'content-type': form }, body: `token=${encodeURIComponent(token)}` });
    // Only once answered: before that, another worker's bearer check may rightly still accept it.
    if (r.status === 200) keep(revoked, token);
    return r;
  },
  async introspect() {
    const entry = pick(valid);
    if (!entry) return ops.clientCredentials();
    return request('POST', '/oauth2/introspect', { headers: { authorization: entry.auth, 'content-type': form }, body: `token=${encodeURIComponent(entry.token)}` });
  },
  async bearerValid() {
    const entry = pick(valid);
    if (!entry) return ops.clientCredentials();
    return request('GET', '/api/guarded', { headers: { authorization: `Bearer ${entry.token}` } });
  },
  async bearerRevoked() {
    const token = pick(revoked);
    if (!token) return ops.bearerGarbage();
    return request('GET', '/api/guarded', { headers: { authorization: `Bearer ${token}` } });
  },
  bearerGarbage() {
    // Half look like the package's tokens (ordered: time prefix, a dot), half are anything.
    const token = Math.random() < 0.5 ? `${Date.now().toString(32).padStart(11, '0')}.${randomBytes(32).toString('base64url')}` : randomBytes(24).toString('base64url');
    return request('GET', '/api/guarded', { headers: { authorization: `Bearer ${token}` } });
  },
  badBasic() {
    // Three in four from a made-up address each; one in four from one of 5 addresses, which reach their limit (429).
    const id = `soak-${randomBytes(8).toString('hex')}`;
    const from = Math.random() < 0.75 ? randomIp() : `192.0.2.${Math.floor(Math.random() * 5)}`;
    return request('POST', '/oauth2/token', { headers: { authorization: basic(id, 'wrong-secret'), 'content-type': form, 'x-forwarded-for': from }, body: 'grant_type=client_credentials' });
  },
  authorize() {
    const query = new URLSearchParams({ response_type: 'code', client_id: server.codeClientId, redirect_uri: server.redirectUri, scope: 'bench:read', state: randomBytes(8).toString('hex') });
    return request('GET', `/oauth2/authorize?${query}`, { headers: { accept: 'text/html', 'x-forwarded-for': randomIp() } });
  },
  /** A browser that signs in and leaves the consent page unanswered (a session in the router's default store); one in
   * two sends a wrong password instead (the sign-in limits' counters), from a made-up address. */
  signInOnly: () => ops.signIn(0),
  async signIn(wrongShare = 0.5) {
    const from = randomIp();
    const query = new URLSearchParams({ response_type: 'code', client_id: server.codeClientId, redirect_uri: server.redirectUri, scope: 'bench:read', state: randomBytes(8).toString('hex') });
    const page = await request('GET', `/oauth2/authorize?${query}`, { headers: { accept: 'text/html', 'x-forwarded-for': from } });
    const field = (name) => page.text?.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1]?.replaceAll('&amp;', '&');
    const csrf = field('csrf_token');
    const requestId = field('request_id');
    if (!csrf || !requestId) return { status: `login page ${page.status}` };
    const wrong = Math.random() < wrongShare;
    const body = new URLSearchParams({ csrf_token: csrf, request_id: requestId, username: wrong ? `soak-${randomBytes(6).toString('hex')}` : USER, password: wrong ? 'wrong' : PASSWORD });
    const login = await request('POST', '/oauth2/login', { headers: { cookie: cookiesOf(page), 'content-type': form, 'x-forwarded-for': from }, body: String(body) });
    if (wrong || !login.headers.location) return { status: `login ${wrong ? 'wrong ' : ''}${login.status}` };
    const consent = await request('GET', login.headers.location.replace(/^https?:\/\/[^/]+/, ''), { headers: { accept: 'text/html', cookie: cookiesOf(login), 'x-forwarded-for': from } });
    return { status: `consent page ${consent.status}${consent.text?.includes('name="decision"') ? '' : ' (no form)'}` };
  },
  abortedBody() {
    // A token request announcing 200 bytes and sending 20: half destroyed at once, half left to the body timeout
    // (the worker goes on; the 408 is counted when it comes).
    sent += 1;
    const hangUp = Math.random() < 0.5;
    const answered = new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(`POST /oauth2/token HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${ccAuth}\r\nContent-Type: ${form}\r\nContent-Length: 200\r\n\r\ngrant_type=client_cr`);
        if (hangUp) setTimeout(() => socket.destroy(), 5);
      });
      let answer = '';
      socket.on('data', (chunk) => { answer += chunk; });
      socket.on('error', () => {});
      socket.on('close', () => resolve({ status: hangUp ? 'aborted' : Number(answer.slice(9, 12)) || 'closed' }));
      socket.setTimeout(30_000, () => socket.destroy());
    });
    if (hangUp) return answered;
    unfinished.add(answered);
    answered.then(({ status }) => {
      unfinished.delete(answered);
      statuses[`abortedBody left ${status}`] = (statuses[`abortedBody left ${status}`] ?? 0) + 1;
    });
    return { status: 'left' };
  },
};

if (!MIX.every((op) => op in ops)) {
  await server.stop();
  failCli(`--mix: the ops are ${Object.keys(ops).join(', ')}`);
}

// Pacing: one shared schedule of `rate` starts per second; a worker waits for its slot, so the load is steady while the
// server keeps up.
const started = Date.now();
const endAt = started + minutes * 60_000;
let slot = 0;
const nextSlot = () => started + (slot++ * 1000) / rate;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let round = 0;
async function worker() {
  while (Date.now() < endAt) {
    const wait = nextSlot() - Date.now();
    if (wait > 0) await sleep(wait);
    const op = MIX[round++ % MIX.length];
    const { status } = await ops[op]();
    const key = `${op} ${status}`;
    statuses[key] = (statuses[key] ?? 0) + 1;
  }
}

// Sampling (a full GC first, in the server), plus the store's connections counted from outside.
let pgClient = null;
let pgDatabase = null;
if (cli.store === 'postgres') {
  const { default: pg } = await import('pg');
  pgClient = new pg.Client({ connectionString: cli['pg-url'] });
  await pgClient.connect();
  pgDatabase = new URL(cli['pg-url']).pathname.slice(1);
}
let sqlite = null;
if (sqliteFile) {
  const { default: Database } = await import('better-sqlite3');
  sqlite = new Database(sqliteFile, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 5000');
}
/** Rows or keys of the store's rate-limit counters (null for a store whose counters this process cannot see). */
async function rateLimitRows() {
  if (cli['rate-limits'] === 'in-process') return null;
  if (sqlite) return sqlite.prepare('SELECT count(*) FROM rate_limits').pluck().get();
  if (pgClient) return (await pgClient.query(`SELECT count(*)::int AS n FROM "${pgSchema}".rate_limits`)).rows[0].n;
  if (redisPrefix) return countRedisKeys(redisUrls, redisPrefix, 'rl:*');
  return null;
}
function ask(message, reply) {
  return new Promise((resolve) => {
    const child = server.child;
    const listener = (m) => {
      if (!(reply in m)) return;
      child.off('message', listener);
      resolve(m[reply]);
    };
    child.on('message', listener);
    child.send(message);
  });
}
/** The server's TCP connections to `remotePort`, counted with ss (its own sockets only). */
function connectionsTo(remotePort) {
  try {
    const out = execFileSync('ss', ['-tnpH', 'state', 'established', `dport = :${remotePort}`], { encoding: 'utf8' });
    return out.split('\n').filter((line) => line.includes(`pid=${pid},`)).length;
  } catch {
    return null;
  }
}
async function sample() {
  const s = await ask('soak-sample', 'soakSample');
  const row = {
    t: Math.round((Date.now() - started) / 1000), sent, rssMB: +(s.rss / 2 ** 20).toFixed(1), heapUsedMB: +(s.heapUsed / 2 ** 20).toFixed(2),
    externalMB: +(s.external / 2 ** 20).toFixed(2), arrayBuffersMB: +(s.arrayBuffers / 2 ** 20).toFixed(2), fds: s.fds, resources: s.resources,
  };
  if (pgClient) {
    const { rows } = await pgClient.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [pgDatabase]);
    row.pgBackends = rows[0].n;
  }
  if (redisPrefix) row.redisConnections = redisUrls.reduce((sum, url) => sum + connectionsTo(new URL(url).port || 6379), 0);
  row.rateLimitRows = await rateLimitRows();
  if (s.inProcessRateLimitKeys !== undefined) row.inProcessRateLimitKeys = s.inProcessRateLimitKeys;
  if (s.memoryStoreRecords !== undefined) row.memoryStoreRecords = s.memoryStoreRecords;
  process.stdout.write(`${JSON.stringify(row)}\n`);
  return row;
}
const snapshot = (name) => ask({ heapSnapshot: join(cli.snapshots, name) }, 'heapSnapshotWritten');

const samples = [await sample()];
if (cli.snapshots) await snapshot(`${cli.store}-start.heapsnapshot`);
const sampler = setInterval(() => {
  sample().then((row) => samples.push(row), (error) => process.stderr.write(`sample failed: ${error.message}\n`));
}, sampleMs);
await Promise.all(Array.from({ length: workers }, worker));
clearInterval(sampler);
// The last sample once the unfinished bodies have timed out (bodyTimeout, 10 s) and the keep-alive sockets are closed.
keepAlive.destroy();
await Promise.all(unfinished);
await sleep(2_000);
samples.push(await sample());
if (cli.snapshots) await snapshot(`${cli.store}-end.heapsnapshot`);
const [first, last] = [samples[0], samples.at(-1)];
process.stdout.write(`${JSON.stringify({
  store: cli.store, minutes, sent, codesMinted: codes, codesUsed: nextCode, statuses,
  start: first, end: last, peakRssMB: Math.max(...samples.map((row) => row.rssMB)),
  tokenFormat: cli['token-format'], heapGrowthMB: +(last.heapUsedMB - first.heapUsedMB).toFixed(2), fdGrowth: last.fds - first.fds,
  rateLimits: cli['rate-limits'], rateLimitWindowSeconds: cli['rate-limit-window-seconds'] ?? 'default',
  rateLimitRows: [first.rateLimitRows, last.rateLimitRows, Math.max(...samples.map((row) => row.rateLimitRows ?? 0))],
  ...(last.inProcessRateLimitKeys !== undefined ? { inProcessRateLimitKeys: [first.inProcessRateLimitKeys, last.inProcessRateLimitKeys] } : {}),
  ...(last.memoryStoreRecords !== undefined ? { memoryStoreRecords: [first.memoryStoreRecords, last.memoryStoreRecords] } : {}),
})}\n`);
await pgClient?.end();
sqlite?.close();
await server.stop();
for (const removal of removals.reverse()) await removal();
