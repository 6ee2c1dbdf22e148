// `oauth-admin keys replace-leaked`: a new signing key that signs at once, every older one deleted.
import type { Command } from 'commander';
import { StoreCapabilityError } from '../clients/client-errors.js';
import { replaceLeakedSigningKeys } from '../jwt/replace-leaked-keys.js';
import { SigningKeysReplacementIncompleteError } from '../jwt/replacement-incomplete-error.js';
import { withAuditLog } from './audit-log.js';
import { checkClock } from './check-clock.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from './cli-error.js';
import { printJson } from './client-json.js';
import { withStore } from './with-store.js';

/**
 * Adds `replace-leaked --yes` to the `keys` command, the CLI's `rotateSigningKey({ leaked: true })`: for store-kept
 * keys that may have leaked. Every older key's tokens stop verifying on each instance when it next reads the keys
 * (within a minute), so it needs `--yes`. A store without `keys.deleteSigningKey` answers `unsupported`, unchanged.
 * @see RFC 9068 §4, RFC 7517 §5, RFC 9700 §4.10.
 */
export function addKeysReplaceLeakedCommand(keys: Command): void {
  keys
    .command('replace-leaked')
    .description('make a new signing key that signs at once and delete every older one: their JWTs stop verifying (needs --yes)')
    .option('--yes', 'confirm: tokens signed with the old keys are refused within a minute, before they expire')
    .option('--json', 'print one JSON object instead of text')
    .action(async (options: { readonly yes?: boolean; readonly json?: boolean }) => {
      if (options.yes !== true) {
        throw new CliError('every JWT signed with the old keys will be refused within a minute: repeat with --yes to replace them', EXIT_USAGE);
      }
      const replaced = await withAuditLog((events) => withStore(async (store) => {
        if (store.keys === undefined) throw new StoreCapabilityError('this store keeps no signing keys (it has no keys part)');
        // No key, nothing leaked: most likely another store than the app's (a Redis ?prefix= names an empty one as
        // readily as the right one). A new key there would report a replacement while the leaked key kept signing.
        if ((await store.keys.listSigningKeys()).length === 0) {
          throw new CliError('the store holds no signing keys, so none can have leaked and nothing was changed: check that OAUTH_STORE '
            + "names the app's store (its ?prefix=, ?schema=, ?table_prefix=), and that the app signs with store-kept keys", EXIT_FAILURE);
        }
        // The new key's createdAt is this machine's time, which orders it against the others: refuse a skewed clock.
        await checkClock(store, {
          ahead: "the new signing key's creation time would be that far ahead, and a planned rotation after it would sign only that much later",
          behind: "the new signing key's creation time, by which the instances order the keys, would be that far behind theirs",
        });
        let done;
        try {
          done = await replaceLeakedSigningKeys(store.keys);
        } catch (error) {
          // The new key is saved, some old ones deleted: recorded, then the failure (replacement_incomplete, exit 1).
          if (error instanceof SigningKeysReplacementIncompleteError) {
            events?.publish({ type: 'signing_keys.replaced', time: new Date(), issuer: null, ip: null, kid: error.kid, signingKid: null, deleted: error.deleted, complete: false });
          }
          throw error;
        }
        events?.publish({ type: 'signing_keys.replaced', time: new Date(), issuer: null, ip: null, kid: done.kid, signingKid: done.signingKid, deleted: done.deleted, complete: true });
        return done;
      }, { mustExist: true }));
      if (options.json) {
        // signing_kid added beside kid, which keeps its meaning (the key this call made): scripts reading it still work.
        printJson({ kid: replaced.kid, signing_kid: replaced.signingKid, deleted: replaced.deleted });
        return;
      }
      const signs = replaced.signingKid !== replaced.kid
        ? `A replacement running at the same moment made a newer signing key, ${replaced.signingKid}, which signs now; this one's key ${replaced.kid} was deleted too`
        : `New signing key ${replaced.kid} signs now`;
      process.stdout.write(`${signs}; deleted ${replaced.deleted.length === 0 ? 'none' : replaced.deleted.join(', ')}.\n`
        + 'Every instance stops using the deleted keys when it next reads the store (within a minute; a restart is immediate).\n');
    });
}
