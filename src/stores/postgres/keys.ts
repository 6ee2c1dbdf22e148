// The PostgreSQL store's signing-key part: rows inserted, never updated; insert-if-none guarded by a partial unique index;
// replacement in one transaction under an advisory lock.
import type { SaveSigningKeyOptions, SigningAlgorithm, SigningKeyRecord, SigningKeyStore } from '../contract.js';
import type { PostgresTables } from './schema.js';
import { lockKey, prepareSql, type PostgresRunner } from './query.js';
import { dateOf, jsonRowSql, parseJsonRow } from './json-row.js';

/** A key as a JSON row, in the order `listSigningKeys` reads it. */
const KEY_RECORD = jsonRowSql(['kid', 'algorithm', 'private_key_pem', ['created_at', 'ms']]);

/**
 * Signing keys of JWT access tokens. `onlyIfNone` inserts with `initial = true`: concurrent first starts
 * both pass the NOT EXISTS check, but the partial unique index on `initial` admits one row, and the loser's
 * ON CONFLICT DO NOTHING inserts nothing, so every instance converges on one key.
 *
 * `replaceSigningKeys` deletes the other rows and inserts in one statement, in a transaction that first takes an
 * exclusive advisory lock keyed by `namespace` (this store's tables). Under READ COMMITTED without it, two concurrent
 * replacements each delete what their snapshot holds, neither sees the other's uncommitted row, and both new keys
 * survive; with it, the second's statement takes its snapshot once the first has committed, and deletes its key.
 * @see RFC 9068 §4, RFC 7517 §5, RFC 9700 §4.14.
 */
export function createPostgresKeyStore(db: PostgresRunner, t: PostgresTables, namespace: string): SigningKeyStore {
  const list = prepareSql(`SELECT ${KEY_RECORD} AS r FROM ${t.signingKeys}
    ORDER BY created_at, kid COLLATE "C"`);
  const insert = prepareSql(`INSERT INTO ${t.signingKeys} (kid, algorithm, private_key_pem, created_at)
    VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING kid`);
  const insertIfNone = prepareSql(`INSERT INTO ${t.signingKeys} (kid, algorithm, private_key_pem, created_at, initial)
    SELECT $1, $2, $3, $4, true WHERE NOT EXISTS (SELECT 1 FROM ${t.signingKeys})
    ON CONFLICT DO NOTHING RETURNING kid`);
  const remove = prepareSql(`DELETE FROM ${t.signingKeys} WHERE kid = $1 RETURNING kid`);
  // One statement: its two parts share a snapshot and touch different kids; ON CONFLICT keeps a retried call's row.
  const replace = prepareSql(`WITH gone AS (DELETE FROM ${t.signingKeys} WHERE kid <> $1 RETURNING kid),
    added AS (INSERT INTO ${t.signingKeys} (kid, algorithm, private_key_pem, created_at)
      VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING)
    SELECT kid FROM gone`);
  const replacing = lockKey(namespace, 'signing-keys');
  return {
    async listSigningKeys(): Promise<readonly SigningKeyRecord[]> {
      const { rows } = await db.read<{ r: string }>(list, []);
      return rows.map((row) => {
        const [kid, algorithm, privateKeyPem, createdAt] = parseJsonRow(row.r);
        return {
          kid: kid as string,
          algorithm: algorithm as SigningAlgorithm,
          privateKeyPem: privateKeyPem as string,
          createdAt: dateOf(createdAt),
        };
      });
    },
    async saveSigningKey(record: SigningKeyRecord, options: SaveSigningKeyOptions = {}): Promise<boolean> {
      const { rows } = await db.query(options.onlyIfNone === true ? insertIfNone : insert, [
        record.kid, record.algorithm, record.privateKeyPem, record.createdAt,
      ]);
      return rows.length === 1;
    },
    async deleteSigningKey(kid: string): Promise<boolean> {
      const { rows } = await db.query(remove, [kid]);
      return rows.length === 1;
    },
    async replaceSigningKeys(record: SigningKeyRecord): Promise<readonly string[]> {
      const { rows } = await db.transaction((tx) => tx.query<{ kid: string }>(replace, [
        record.kid, record.algorithm, record.privateKeyPem, record.createdAt,
      ]), { exclusive: [replacing] });
      return rows.map((row) => row.kid);
    },
  };
}
