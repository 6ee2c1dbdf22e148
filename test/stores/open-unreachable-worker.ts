// Child process of open-unreachable.test.ts: opens a store against a closed port, with nothing else open in the process.
import pg from 'pg';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { createStoreFromUrl } from '../../src/stores/from-url.js';

const [kind = ''] = process.argv.slice(2);
// Port 1 on loopback: nothing listens there, so every connection attempt is refused at once.
const PG_CLOSED = 'postgres://postgres@127.0.0.1:1/test';
const REDIS_CLOSED = 'redis://127.0.0.1:1';

function open(): Promise<unknown> {
  if (kind === 'postgres') return createPostgresStore({ connectionString: PG_CLOSED });
  // A host pool has no connectionTimeoutMillis: the store's own deadline is what bounds the wait.
  if (kind === 'postgres-pool') return createPostgresStore({ pool: new pg.Pool({ connectionString: PG_CLOSED }) });
  if (kind === 'postgres-url') return createStoreFromUrl(PG_CLOSED);
  if (kind === 'redis') return createRedisStore({ url: REDIS_CLOSED });
  if (kind === 'redis-cluster') return createRedisStore({ cluster: { rootNodes: [REDIS_CLOSED] } });
  throw new Error(`unknown store ${kind}`);
}

// No process.exit and no timer of its own: if the opening waits on nothing that keeps the event loop alive,
// Node exits with code 13 (unsettled top-level await) before either line below is written.
try {
  await open();
  process.stdout.write(`${JSON.stringify({ opened: true })}\n`);
} catch (error) {
  const { name, message } = error as Error;
  process.stdout.write(`${JSON.stringify({ rejected: { name, message } })}\n`);
}
