// The PostgreSQL store's signing-key part: rows inserted, never updated; insert-if-none guarded by a partial unique index.
import type { SaveSigningKeyOptions, SigningAlgorithm, SigningKeyRecord, SigningKeyStore } from '../contract.js';
import type { PostgresTables } from './schema.js';
import { prepareSql, type PostgresRunner } from './query.js';
import { dateOf, jsonRowSql, parseJsonRow } from './json-row.js';

/** A key as a JSON row, in the order `listSigningKeys` reads it. */
const KEY_RECORD = jsonRowSql(['kid', 'algorithm', 'private_key_pem', ['created_at', 'ms']]);

/**
 * Signing keys of JWT access tokens. `onlyIfNone` inserts with `initial = true`: concurrent first starts
 * both pass the NOT EXISTS check, but the partial unique index on `initial` admits one row, and the loser's
 * ON CONFLICT DO NOTHING inserts nothing, so every instance converges on one key.
 * @see RFC 9068 §4, RFC 7517 §5.
 */
export function createPostgresKeyStore(db: PostgresRunner, t: PostgresTables): SigningKeyStore {
  const list = prepareSql(`SELECT ${KEY_RECORD} AS r FROM ${t.signingKeys}
    ORDER BY created_at, kid COLLATE "C"`);
  const insert = prepareSql(`INSERT INTO ${t.signingKeys} (kid, algorithm, private_key_pem, created_at)
    VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING kid`);
  const insertIfNone = prepareSql(`INSERT INTO ${t.signingKeys} (kid, algorithm, private_key_pem, created_at, initial)
    SELECT $1, $2, $3, $4, true WHERE NOT EXISTS (SELECT 1 FROM ${t.signingKeys})
    ON CONFLICT DO NOTHING RETURNING kid`);
  const remove = prepareSql(`DELETE FROM ${t.signingKeys} WHERE kid = $1 RETURNING kid`);
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
  };
}
