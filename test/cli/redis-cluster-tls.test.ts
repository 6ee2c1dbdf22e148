// A Redis Cluster that speaks only TLS (rediss+cluster://): every node connection uses TLS, and the URL alone says so.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runCliWith } from '../helpers/run-cli.js';

const url = process.env.OAUTH_TEST_REDIS_TLS_CLUSTER_URL ?? '';
const ca = process.env.OAUTH_TEST_REDIS_TLS_CA ?? '';
if (!url) console.info('Redis TLS cluster tests skipped: set OAUTH_TEST_REDIS_TLS_CLUSTER_URL and OAUTH_TEST_REDIS_TLS_CA (see .ci/run)');

describe.skipIf(!url || !ca)('oauth-admin on a TLS-only Redis Cluster (rediss+cluster://)', () => {
  // A prefix of this run: the cluster is shared by every run of the suite.
  const store = `${url}?prefix=${encodeURIComponent(`tls-${randomBytes(4).toString('hex')}:`)}`;
  const run = (args: readonly string[], trustCa = true) =>
    runCliWith([...args, '--json'], { env: { ...process.env, OAUTH_STORE: store, ...(trustCa ? { NODE_EXTRA_CA_CERTS: ca } : {}) } });

  // node-redis opens every node connection, the root's included, from the cluster's defaults, not from a root URL:
  // without TLS there, nothing here worked (All the root nodes are unavailable).
  it('registers, lists and deletes integrations (the clients\' and the tokens\' slots), each connection over TLS', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      const created = await run(['clients', 'create', '--name', `TLS ${i}`, '--flow', 'client_credentials']);
      expect(created.stderr).toBe('');
      ids.push(String((JSON.parse(created.stdout) as { client_id: string }).client_id));
    }
    const listed = await run(['clients', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ client_id: string }>).map((c) => c.client_id).sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await run(['clients', 'delete', id, '--yes'])).code).toBe(0);
  }, 60_000);

  it('without the CA trusted, is refused as unavailable: the nodes are reached over TLS, never in clear', async () => {
    const result = await run(['clients', 'list'], false);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr)).toMatchObject({ error: 'store_unavailable' });
  });
});
