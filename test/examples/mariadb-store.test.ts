// The example MariaDB adapter (examples/mariadb-store): passes the conformance suite, and each fault fails it.
import mysql from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/stores/contract.js';
import { isStoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { buildClient, buildCode, buildToken, justExpired } from '../../src/testing/conformance-fixtures.js';
import { checkStoreConformance, runStoreConformance } from '../../src/testing/index.js';
import { createMariaDbStore, type MariaDbStoreFaults, type MariaDbStoreOptions } from '../../examples/mariadb-store/index.js';
import { startFaultProxy, type FaultProxy } from '../stores/fault-proxy.js';

const url = process.env.OAUTH_TEST_MARIADB_URL ?? '';
if (!url) console.info('MariaDB example store tests skipped: set OAUTH_TEST_MARIADB_URL=mysql://root@127.0.0.1:3306/test to run them');

const admin = url ? mysql.createPool({ uri: url, connectionLimit: 4 }) : null;
let proxy: Promise<FaultProxy> | null = null;
/** One proxy in front of the server for every store of this file, so that an outage can be switched on. */
function viaProxy(): Promise<FaultProxy> {
  const target = new URL(url);
  proxy ??= startFaultProxy({ host: target.hostname, port: Number(target.port || 3306) });
  return proxy;
}

let counter = 0;
/** Where each store lives, and which kind of tables (collation) its database holds. */
const placeOf = new WeakMap<Store, { database: string; kind: string }>();
/** Emptied databases, by kind, ready for the next store: creating ten InnoDB tables per rule is the slow part. */
const spare = new Map<string, string[]>();
const created: string[] = [];

/**
 * A store on a database of its own, empty (new, or emptied by `destroyStore`), reached through the proxy.
 * The tables are the store's to create, on first use; a reused database already has them.
 */
async function openStore(options: Partial<MariaDbStoreOptions> = {}): Promise<Store> {
  const kind = options.faults?.caseInsensitiveIds === true ? 'case-insensitive' : 'exact';
  let database = spare.get(kind)?.pop();
  if (database === undefined) {
    counter += 1;
    database = `oauth_t${process.pid}_${counter}_${Math.random().toString(36).slice(2, 8)}`;
    await admin!.query(`CREATE DATABASE \`${database}\``);
    created.push(database);
  }
  const storeUrl = new URL(url);
  storeUrl.host = `127.0.0.1:${(await viaProxy()).port}`;
  storeUrl.pathname = `/${database}`;
  const store = createMariaDbStore({ queryTimeoutMs: 2000, sweepIntervalSeconds: 0, ...options, url: storeUrl.href });
  placeOf.set(store, { database, kind });
  return store;
}

/** Closes the store, deletes every row but the lock rows, and keeps the database for the next store of its kind. */
async function destroyStore(store: Store): Promise<void> {
  await store.close?.();
  const { database, kind } = placeOf.get(store)!;
  const [tables] = await admin!.query('SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?', [
    database,
  ]);
  for (const { name } of tables as { name: string }[]) {
    if (name !== 'locks') await admin!.query(`DELETE FROM \`${database}\`.\`${name}\``);
  }
  spare.set(kind, [...(spare.get(kind) ?? []), database]);
}

/** A second store on the database of `store`, straight to the server (no proxy), as another instance opens it. */
function openPeer(store: Store): Store {
  const peerUrl = new URL(url);
  peerUrl.pathname = `/${placeOf.get(store)!.database}`;
  return createMariaDbStore({ queryTimeoutMs: 2000, sweepIntervalSeconds: 0, url: peerUrl.href });
}

/** Cuts every connection through the proxy and refuses new ones, until the returned function is called. */
async function simulateOutage(): Promise<() => Promise<void>> {
  const current = await viaProxy();
  current.setMode('down');
  return async () => current.setMode('up');
}

/** Each fault, and the rules that guard against it (by rule name): at least one must fail, every run. */
const FAULTS: readonly { fault: keyof MariaDbStoreFaults; rules: RegExp }[] = [
  { fault: 'revokedCheckOutsideTransaction', rules: /^saveTokens racing revoke/ },
  { fault: 'caseInsensitiveIds', rules: /differing only in case or by a trailing space/ },
  { fault: 'rawDriverErrors', rules: /^outage:/ },
  { fault: 'nonAtomicOnlyIfNone', rules: /concurrent onlyIfNone saves/ },
  { fault: 'nonAtomicReplaceSigningKeys', rules: /concurrent replaceSigningKeys calls/ },
];
const RUNS = 3;

describe.skipIf(!url)('example MariaDB store (examples/mariadb-store)', () => {
  afterAll(async () => {
    for (const database of created) await admin?.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin?.end();
    await (await proxy)?.close();
  });

  runStoreConformance({ name: 'mariadb example', createStore: () => openStore(), destroyStore, simulateOutage, openPeer });

  describe('each fault switched on fails the conformance suite, every run', () => {
    for (const { fault, rules } of FAULTS) {
      it(`${fault}: a rule guarding against it fails in each of ${RUNS} runs`, async () => {
        const failures: string[][] = [];
        for (let run = 0; run < RUNS; run++) {
          const report = await checkStoreConformance({
            name: `mariadb example with ${fault}`,
            createStore: () => openStore({ faults: { [fault]: true } }),
            destroyStore,
            simulateOutage,
            only: (rule) => rules.test(rule),
          });
          expect(report.passed.length + report.failed.length, 'the selection matched no rule').toBeGreaterThan(0);
          failures.push(report.failed.map((f) => f.rule));
        }
        console.info(`fault ${fault}: failed rules per run`, JSON.stringify(failures));
        expect(failures.map((rulesFailed) => rulesFailed.length > 0)).toEqual(Array(RUNS).fill(true));
      }, 600_000);
    }
  });

  describe('operations', () => {
    it('a server that stops answering (hang) rejects every call with StoreUnavailableError, more calls than connections, then recovers', async () => {
      const store = await openStore({ queryTimeoutMs: 500 });
      const current = await viaProxy();
      try {
        const { client } = buildClient();
        await store.clients.createClient!(client);
        current.setMode('hang');
        // 15 calls on a pool of 10: a connection left behind by a timed-out query would starve the pool for good.
        const failures = await Promise.all(
          Array.from({ length: 15 }, () => store.clients.findClient(client.clientId).catch((err: unknown) => err)),
        );
        expect(failures.filter((err) => !isStoreUnavailableError(err)).map(String)).toEqual([]);
        current.setMode('up');
        await expect.poll(() => store.clients.findClient(client.clientId).catch(() => null), { timeout: 5000 }).toEqual(client);
      } finally {
        current.setMode('up');
        await destroyStore(store);
      }
    });

    it('the background sweep deletes expired codes and tokens and keeps live ones', async () => {
      const store = await openStore({ sweepIntervalSeconds: 0.05 });
      const { database } = placeOf.get(store)!;
      const count = async (table: string): Promise<number> =>
        ((await admin!.query(`SELECT COUNT(*) AS n FROM \`${database}\`.${table}`))[0] as { n: number }[])[0]!.n;
      try {
        const live = buildToken();
        await store.tokens.saveTokens(buildToken({ expiresAt: justExpired() }), null, { authorizedAt: new Date() });
        await store.tokens.saveTokens(live, null, { authorizedAt: new Date() });
        await store.codes.saveCode(buildCode({ expiresAt: justExpired() }));
        await expect.poll(() => count('tokens'), { timeout: 5000 }).toBe(1);
        await expect.poll(() => count('codes'), { timeout: 5000 }).toBe(0);
        expect(await store.tokens.findAccessToken(live.tokenHash)).toEqual(live);
      } finally {
        await destroyStore(store);
      }
    });

    it('refuses an unsafe tablePrefix and a URL that is not mysql://, naming the option', () => {
      expect(() => createMariaDbStore({ url, tablePrefix: 'a-b' })).toThrow(/"tablePrefix"/);
      expect(() => createMariaDbStore({ url: 'postgres://x' })).toThrow(/"url"/);
    });
  });
});
