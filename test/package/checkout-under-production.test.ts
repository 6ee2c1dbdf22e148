// The README's quick start (`npm install && npm start`, `npm install && npm test`) in a checkout whose shell says
// NODE_ENV=production, as a deployment host's does: npm then leaves devDependencies out unless told otherwise.
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, run } from './packed-host.js';

describe('a checkout under NODE_ENV=production', () => {
  it('npm install still installs the devDependencies that npm start and npm test build and run with (typescript, vitest, better-sqlite3)', async () => {
    // The checkout's package.json, lockfile and .npmrc alone; --dry-run --offline reads the lockfile, fetches nothing.
    const dir = await mkdtemp(join(tmpdir(), 'eor-checkout-'));
    try {
      for (const file of ['package.json', 'package-lock.json', '.npmrc']) {
        if (existsSync(join(ROOT, file))) await copyFile(join(ROOT, file), join(dir, file));
      }
      const previous = process.env['NODE_ENV'];
      process.env['NODE_ENV'] = 'production';
      const result = await run('npm', ['install', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], dir)
        .finally(() => { process.env['NODE_ENV'] = previous; });
      expect(result.code, result.stderr).toBe(0);
      const added = new Set(result.stdout.split('\n').filter((line) => line.startsWith('add ')).map((line) => line.split(' ')[1]));
      // Without them `npm start` stopped at "sh: 1: tsc: not found", before the example app could say anything.
      for (const name of ['typescript', 'vitest', 'better-sqlite3', 'express']) expect(added.has(name), name).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('the suite runs as NODE_ENV=test whatever the shell says (its production cases set NODE_ENV themselves)', () => {
    // Under NODE_ENV=production the router warns about plain-http issuers and refuses a missing session secret,
    // which the suite's other cases do not expect.
    expect(process.env['NODE_ENV']).toBe('test');
  });
});
