// Creates a store file's missing parent folders one at a time, since Node 20's recursive mkdir can spin forever.
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `mkdir -p` of an absolute `dir`, each folder it creates given `mode`. Not `mkdirSync(dir, { recursive: true })`: on
 * Node 20 that loops forever at full CPU when a `mkdir` answers ENOENT for a parent that exists (under `/proc`, say:
 * `createSqliteStore({ filename: '/proc/x/oauth.sqlite' })` never returned). Here each `mkdir` makes one folder whose
 * parent is there, so a refusal throws `fs`'s own error (ENOENT, EACCES, ENOTDIR…) naming the folder.
 * @see the README's SQLite store options (missing parent folders are created, 0700).
 */
export function makeDirectories(dir: string, mode: number): void {
  const missing: string[] = [];
  for (let at = dir; !exists(at); at = dirname(at)) {
    missing.push(at);
    // The root always exists; reaching it without finding a folder means stat itself failed there.
    if (dirname(at) === at) break;
  }
  for (const folder of missing.reverse()) {
    try {
      mkdirSync(folder, { mode });
    } catch (err) {
      // Another process (the CLI, a second instance) made it meanwhile.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
