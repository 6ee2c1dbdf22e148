// The SQLite store's signing-key part: one table (schema version 2), insert-if-none in one statement, replacement in one transaction.
import type { SqliteConnection } from './driver.js';
import type { SaveSigningKeyOptions, SigningAlgorithm, SigningKeyRecord, SigningKeyStore } from '../contract.js';
import type { SqliteLockWait } from './lock-wait.js';

/** `signing_keys` row; created_at in ms. */
interface SigningKeyRow {
  readonly kid: string;
  readonly algorithm: string;
  readonly private_key_pem: string;
  readonly created_at: number;
}

function rowToRecord(row: SigningKeyRow): SigningKeyRecord {
  return { kid: row.kid, algorithm: row.algorithm as SigningAlgorithm, privateKeyPem: row.private_key_pem, createdAt: new Date(row.created_at) };
}

function recordToRow(record: SigningKeyRecord): SigningKeyRow {
  return { kid: record.kid, algorithm: record.algorithm, private_key_pem: record.privateKeyPem, created_at: record.createdAt.getTime() };
}

/**
 * Signing keys in the `signing_keys` table, statements prepared once. `onlyIfNone` is a single
 * `INSERT … SELECT … WHERE NOT EXISTS`: SQLite runs one writer at a time, so across connections and
 * processes exactly one of several first starts inserts. A replacement's delete and insert run in one IMMEDIATE
 * transaction (`guarded`): the write lock is held from before the delete, so a concurrent replacement, from any
 * connection or process, deletes this one's key or sees its own deleted, and one key is left.
 * @see RFC 9068 §4, RFC 7517 §5.
 */
export function createSqliteKeyStore(db: SqliteConnection, { run }: SqliteLockWait, guarded: <T>(write: () => T) => T): SigningKeyStore {
  const list = db.prepare<[], SigningKeyRow>('SELECT * FROM signing_keys ORDER BY created_at, kid');
  const insert = db.prepare<SigningKeyRow>(`
    INSERT INTO signing_keys (kid, algorithm, private_key_pem, created_at)
    VALUES (@kid, @algorithm, @private_key_pem, @created_at)
    ON CONFLICT (kid) DO NOTHING`);
  // The WHERE also keeps SQLite from reading ON CONFLICT as part of the SELECT (its documented ambiguity).
  const insertIfNone = db.prepare<SigningKeyRow>(`
    INSERT INTO signing_keys (kid, algorithm, private_key_pem, created_at)
    SELECT @kid, @algorithm, @private_key_pem, @created_at
    WHERE NOT EXISTS (SELECT 1 FROM signing_keys)
    ON CONFLICT (kid) DO NOTHING`);
  const remove = db.prepare<[string]>('DELETE FROM signing_keys WHERE kid = ?');
  const removeOthers = db.prepare<[string], { kid: string }>('DELETE FROM signing_keys WHERE kid <> ? RETURNING kid');
  return {
    async listSigningKeys(): Promise<readonly SigningKeyRecord[]> {
      return run(() => list.all().map(rowToRecord));
    },
    async saveSigningKey(record: SigningKeyRecord, options: SaveSigningKeyOptions = {}): Promise<boolean> {
      return run(() => guarded(() => (options.onlyIfNone === true ? insertIfNone : insert).run(recordToRow(record)).changes === 1));
    },
    async deleteSigningKey(kid: string): Promise<boolean> {
      return run(() => guarded(() => remove.run(kid).changes === 1));
    },
    async replaceSigningKeys(record: SigningKeyRecord): Promise<readonly string[]> {
      return run(() => guarded(() => {
        const deleted = removeOthers.all(record.kid).map((row) => row.kid);
        insert.run(recordToRow(record));
        return deleted;
      }));
    },
  };
}
