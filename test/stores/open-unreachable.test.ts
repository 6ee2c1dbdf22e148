// Opening a networked store whose server is down rejects with StoreUnavailableError even in a process that has
// nothing else open (a CLI run, a one-off script): no wait the opening depends on may let the event loop empty.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const WORKER = fileURLToPath(new URL('./open-unreachable-worker.ts', import.meta.url));
// Only a store that hangs gets here: the test fails instead of waiting for the runner's timeout.
const LIMIT_MS = 30_000;

/** Runs the worker for one store kind; resolves with its exit code and the one line it printed. */
function openInChild(kind: string): Promise<{ code: number | string | null; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', WORKER, kind], { timeout: LIMIT_MS }, (error, stdout) => {
      resolve({ code: error ? (error.code ?? error.signal ?? null) : 0, stdout });
    });
  });
}

describe('opening a store against a closed port, in a process with nothing else open', () => {
  it.each([
    ['postgres', 'PostgreSQL store unavailable (ECONNREFUSED)'],
    ['postgres-pool', 'PostgreSQL store unavailable (ECONNREFUSED)'],
    ['postgres-url', 'PostgreSQL store unavailable (ECONNREFUSED)'],
    ['redis', 'Redis store unavailable (ECONNREFUSED)'],
    ['redis-cluster', 'Redis store unavailable (All the root nodes are unavailable)'],
  ])('%s: the opening rejects with StoreUnavailableError and the process exits by itself (never code 13)', { timeout: LIMIT_MS + 10_000 }, async (kind, message) => {
    const result = await openInChild(kind);
    expect(result).toEqual({ code: 0, stdout: `${JSON.stringify({ rejected: { name: 'StoreUnavailableError', message } })}\n` });
  });
});
