// Revokes tokens through every SQLite path while a load runs, and counts requests served with a token already revoked.
// node bench/revocation-under-load.js [--seconds 8] [--connections 10] [--clients 8] [--tokens 25]
//
// The server child is bench/server.js on a SQLite file of this run, bearer cache on (the default). Integrations
// are registered with the CLI (another process on the file), each gets --tokens access tokens, then
// --connections loops send GET /api/guarded back to back, each with a random token of the pool, revoked or
// not. Meanwhile one revocation every 250 ms, cycling through the paths:
//   endpoint  POST /oauth2/revoke of one token (RFC 7009), answered by the server itself (its own connection);
//   cli       `oauth-admin tokens revoke --client` of one integration: another process, another connection;
//   disable   `oauth-admin clients disable` of one integration (its tokens go with it), another process.
// A revocation counts from the moment its call returned (response received, CLI process exited). A request
// SENT after that moment and answered 200 is a violation; one sent before and answered after is in flight
// (either answer is right). The run fails (exit 1) on any violation. No timing assertion: it counts.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { startServer } from './spawn-server.js';
import { tokenRequest } from './token-request.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const { values: cli } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '10' },
    clients: { type: 'string', default: '8' },
    tokens: { type: 'string', default: '25' },
  },
});

const dir = mkdtempSync(join(tmpdir(), 'oauth-revocation-load-'));
const file = join(dir, 'oauth.sqlite');
const env = { ...process.env, OAUTH_STORE: `sqlite:${file}` };
const server = await startServer(['--app', 'oauth', '--store', 'sqlite', '--sqlite-file', file]);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(cli.connections) + 4 });

/** One HTTP request on the keep-alive agent: its status and body. */
function request(method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${path}`, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function oauthAdmin(...args) {
  const { stdout } = await run(process.execPath, [CLI, ...args], { env });
  return stdout;
}

try {
  /** @type {{ clientId: string, secret: string, tokens: string[] }[]} */
  const clients = [];
  for (let i = 0; i < Number(cli.clients); i += 1) {
    const created = JSON.parse(await oauthAdmin('clients', 'create', '--name', `load ${i}`, '--flow', 'client_credentials', '--json'));
    const clientId = created.client_id ?? created.client?.client_id;
    const secret = created.client_secret;
    const tokens = [];
    for (let t = 0; t < Number(cli.tokens); t += 1) {
      const r = tokenRequest(clientId, secret);
      const answer = await request('POST', '/oauth2/token', r.headers, r.body);
      if (answer.status !== 200) throw new Error(`token request answered ${answer.status}: ${answer.body}`);
      tokens.push(JSON.parse(answer.body).access_token);
    }
    clients.push({ clientId, secret, tokens });
  }
  const all = clients.flatMap((c) => c.tokens.map((token) => ({ token, client: c })));
  /** token → performance.now() when the call that revoked it returned, and by which path. */
  const revokedAt = new Map();
  const log = []; // [token, sentAt, answeredAt, status]

  const endAt = performance.now() + Number(cli.seconds) * 1000;
  async function load() {
    while (performance.now() < endAt) {
      const { token } = all[Math.floor(Math.random() * all.length)];
      const sentAt = performance.now();
      const { status } = await request('GET', '/api/guarded', { authorization: `Bearer ${token}` });
      log.push([token, sentAt, performance.now(), status]);
    }
  }

  const paths = ['endpoint', 'cli', 'disable'];
  const done = { endpoint: 0, cli: 0, disable: 0 };
  async function revoke() {
    let n = 0;
    // Integrations whose tokens are still all live, for the per-integration paths.
    const whole = [...clients];
    while (performance.now() < endAt - 500) {
      const path = paths[n % paths.length];
      n += 1;
      if (path === 'endpoint') {
        const live = all.filter(({ token }) => !revokedAt.has(token));
        const pick = live[Math.floor(Math.random() * live.length)];
        if (!pick) continue;
        const basic = Buffer.from(`${encodeURIComponent(pick.client.clientId)}:${encodeURIComponent(pick.client.secret)}`).toString('base64');
        const answer = await request('POST', '/oauth2/revoke', { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' }, `token=${pick.token}&token_type_hint=access_token`);
        if (answer.status !== 200) throw new Error(`revocation answered ${answer.status}: ${answer.body}`);
        if (!revokedAt.has(pick.token)) revokedAt.set(pick.token, { at: performance.now(), path });
      } else {
        const target = whole.shift();
        if (!target) continue;
        if (path === 'cli') await oauthAdmin('tokens', 'revoke', '--client', target.clientId);
        else await oauthAdmin('clients', 'disable', target.clientId);
        const at = performance.now();
        for (const token of target.tokens) if (!revokedAt.has(token)) revokedAt.set(token, { at, path });
      }
      done[path] += 1;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  await Promise.all([revoke(), ...Array.from({ length: Number(cli.connections) }, load)]);

  const rows = Object.fromEntries(paths.map((p) => [p, { revocations: done[p], after: 0, refused: 0, violations: 0, inFlight200: 0 }]));
  for (const [token, sentAt, answeredAt, status] of log) {
    const revoked = revokedAt.get(token);
    if (!revoked) continue;
    const row = rows[revoked.path];
    if (sentAt > revoked.at) {
      row.after += 1;
      if (status === 200) row.violations += 1;
      else if (status === 401) row.refused += 1;
    } else if (answeredAt > revoked.at && status === 200) row.inFlight200 += 1;
  }
  const total = log.length;
  const ok = log.filter((l) => l[3] === 200).length;
  console.log(`express-oauth-router revocation under load: Node ${process.version}, SQLite, ${cli.connections} connections, ${cli.seconds} s, ${clients.length} integrations × ${cli.tokens} tokens`);
  console.log(`${total} requests (${(total / Number(cli.seconds)).toFixed(0)} req/s), ${ok} answered 200, ${total - ok} refused\n`);
  console.log('| path | revocations | requests sent after their token was revoked | refused 401 | served 200 (violations) | 200 while in flight |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const p of paths) {
    const r = rows[p];
    console.log(`| ${p} | ${r.revocations} | ${r.after} | ${r.refused} | ${r.violations} | ${r.inFlight200} |`);
  }
  const violations = Object.values(rows).reduce((a, r) => a + r.violations, 0);
  if (violations > 0) {
    console.error(`\n${violations} request(s) sent after a revocation had returned were served with the revoked token`);
    process.exitCode = 1;
  }
} finally {
  agent.destroy();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
