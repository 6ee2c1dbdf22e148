// `oauth-admin keys list`: the signing keys of JWT access tokens kept in the store, without their private parts.
import type { Command } from 'commander';
import { StoreCapabilityError } from '../clients/client-errors.js';
import { printJson } from './client-json.js';
import { formatTable } from './format-table.js';
import { withStore } from './with-store.js';

/**
 * Adds `list` to the `keys` command: each kid, algorithm and creation time, oldest first (the newest signs once
 * published). Read-only; the private key is never printed. A store without a `keys` part answers `unsupported`.
 * @see RFC 9068 §4, RFC 7517 §5, RFC 7638 (kid).
 */
export function addKeysListCommand(keys: Command): void {
  keys
    .command('list')
    .description('list the store-kept signing keys of JWT access tokens, oldest first (never their private parts)')
    .option('--json', 'print a JSON array instead of a table')
    .action(async (options: { readonly json?: boolean }) => {
      const records = await withStore(async (store) => {
        if (store.keys === undefined) throw new StoreCapabilityError('this store keeps no signing keys (it has no keys part)');
        return store.keys.listSigningKeys();
      }, { mustExist: true });
      const listed = records.map((record) => ({ kid: record.kid, algorithm: record.algorithm, created_at: record.createdAt.toISOString() }));
      if (options.json) {
        printJson(listed);
        return;
      }
      if (listed.length === 0) {
        process.stdout.write('No signing keys: the first router with accessTokenFormat "jwt" makes one.\n');
        return;
      }
      process.stdout.write(`${formatTable(['KID', 'ALGORITHM', 'CREATED_AT'], listed.map((key) => [key.kid, key.algorithm, key.created_at]))}\n`);
    });
}
