// Experiment for issue 10 (bench/ab `sqlite:writer-thread`): the SQLite token write moved to a worker thread with its own connection.
// Not the package's code: it replaces a built store's saveTokens so the A/B runner can measure what the move would
// buy. The main thread batches one event-loop turn's saves into one message; the worker runs them as the group
// commit does (one BEGIN IMMEDIATE … COMMIT, a savepoint, the tombstone check and the insert per save) and answers
// with one message per batch. What it leaves out (lock waits, the revocation mark that the worker's commits would
// move) only makes it cheaper than a real one would be.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { join } from 'node:path';

if (!isMainThread) {
  const { root, file } = workerData;
  const { default: Database } = await import(join(root, 'node_modules/better-sqlite3/lib/index.js'));
  const { prepareSqliteStatements } = await import(join(root, 'dist/stores/sqlite/statements.js'));
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  const s = prepareSqliteStatements(db);
  // A root built before 2026-11-27 binds the store's statements by name (rows as objects), later ones by position
  // (rows as `tokenValues` arrays: hash, kind, grant, client, user, …).
  // From schema version 8 the check takes the grant again after each revocation tombstone (11 placeholders, not 9).
  const grantTwice = (s.isRefused.source.match(/\?/g) ?? []).length === 11;
  const refused = (row, authorizedAt, now) => (Array.isArray(row)
    ? (grantTwice
      ? s.isRefused.get(row[2], now, row[3], authorizedAt, now, row[2], row[3], row[4], authorizedAt, now, row[2])
      : s.isRefused.get(row[2], now, row[3], authorizedAt, now, row[3], row[4], authorizedAt, now))
    : s.isRefused.get({ grant_id: row.grant_id, client_id: row.client_id, user_id: row.user_id, authorized_at: authorizedAt, now })) === 1;
  const insert = (row) => (Array.isArray(row) ? s.insertToken.run(...row) : s.insertToken.run(row));
  const save = db.transaction(([access, refresh, authorizedAt]) => {
    const now = Date.now();
    if (refused(access, authorizedAt, now) || (refresh && refused(refresh, authorizedAt, now))) return false;
    insert(access);
    if (refresh) insert(refresh);
    return true;
  });
  const batch = db.transaction((items) => items.map((item) => save(item)));
  parentPort.on('message', ({ id, items }) => parentPort.postMessage({ id, saved: batch.immediate(items) }));
}

/** Replaces `store.tokens.saveTokens` with the worker's. @returns a function that stops the worker. */
export async function moveWritesToThread(root, store, file) {
  const rows = await import(join(root, 'dist/stores/sqlite/rows.js'));
  const tokenToRow = rows.tokenValues ?? rows.tokenToRow;
  const worker = new Worker(new URL(import.meta.url), { workerData: { root, file } });
  let queue = [];
  let scheduled = false;
  let nextId = 0;
  const waiting = new Map();
  worker.on('message', ({ id, saved }) => {
    const resolvers = waiting.get(id);
    waiting.delete(id);
    saved.forEach((value, i) => resolvers[i](value));
  });
  const flush = () => {
    scheduled = false;
    const id = (nextId += 1);
    waiting.set(id, queue.map((entry) => entry.resolve));
    worker.postMessage({ id, items: queue.map((entry) => entry.item) });
    queue = [];
  };
  store.tokens.saveTokens = (access, refresh, options) => new Promise((resolve) => {
    queue.push({
      // The third argument (issued_at, schema version 8) is ignored by the roots before it.
      item: [tokenToRow('access', access, options.authorizedAt.getTime()), refresh ? tokenToRow('refresh', refresh, options.authorizedAt.getTime()) : null, options.authorizedAt.getTime()],
      resolve,
    });
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
  return () => worker.terminate();
}
