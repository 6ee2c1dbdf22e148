// Child process for sqlite.test.ts: opens the store file at once with its siblings, then races them on what it is told.
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { buildTokenPair } from '../../src/testing/conformance-fixtures.js';

/** One saveTokens call as the worker made it: authorizedAt in ms, and whether the store accepted it. */
export interface SaveReport {
  readonly accessHash: string;
  readonly refreshHash: string;
  readonly authorizedAt: number;
  readonly saved: boolean;
}

/** What the worker sends to the test. */
export interface WorkerMessage {
  readonly ready?: true;
  readonly result?: unknown;
  readonly progress?: true;
  readonly saves?: readonly SaveReport[];
  readonly error?: string;
}

/** What the test sends: consume one code, or save `count` token pairs of one integration, one after another. */
interface Command {
  readonly consume?: string;
  readonly save?: { readonly clientId: string; readonly count: number };
}

const filename = process.argv[2];
if (!filename || !process.send) throw new Error('usage: fork(sqlite-process-worker.ts, [filename])');
const send = (message: WorkerMessage): void => void process.send?.(message);

// Opening migrates the schema: siblings do the same at the same moment, which is part of what is tested.
const store = createSqliteStore({ filename, sweepIntervalSeconds: 0 });
send({ ready: true });

async function saveMany(clientId: string, count: number): Promise<SaveReport[]> {
  const reports: SaveReport[] = [];
  for (let i = 0; i < count; i += 1) {
    // Taken before the save, as a token request takes it at its start.
    const authorizedAt = Date.now();
    const { access, refresh } = buildTokenPair({ clientId });
    const saved = await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date(authorizedAt) });
    reports.push({ accessHash: access.tokenHash, refreshHash: refresh.tokenHash, authorizedAt, saved });
    if (i === Math.floor(count / 3)) send({ progress: true });
  }
  return reports;
}

process.on('message', (command: Command) => {
  const work = command.consume !== undefined
    ? store.codes.consumeCode(command.consume).then((result) => send({ result }))
    : saveMany(command.save!.clientId, command.save!.count).then((saves) => send({ saves }));
  work.catch((err: unknown) => send({ error: String(err) }));
});

process.on('disconnect', () => void store.close());
