// The example MariaDB store's signing keys: rows never updated; "insert if none" and replacement serialised on a lock row.
import type { SigningAlgorithm, SigningKeyRecord, SigningKeyStore } from 'express-oauth-router';
import { isDuplicateKey } from './codec.js';
import type { MariaDb, Queryable } from './db.js';
import type { MariaDbStoreFaults } from './options.js';
import type { MariaDbTables } from './schema.js';

interface SigningKeyRow {
  kid: string;
  algorithm: string;
  private_key_pem: string;
  created_at: Date;
}

/**
 * Signing keys of JWT access tokens. Every save takes the `signing_keys` lock row (`SELECT … FOR UPDATE`)
 * before it looks and inserts, so of N instances starting together on an empty store exactly one inserts
 * with `onlyIfNone` and the others find its key. With the `nonAtomicOnlyIfNone` fault the count and the
 * insert are two unlocked statements, and concurrent first starts can all insert. `replaceSigningKeys` takes the same
 * lock row, then reads, deletes every other key and inserts in that transaction, so concurrent replacements leave one
 * key; with the `nonAtomicReplaceSigningKeys` fault it reads the keys first, then deletes those it read and inserts,
 * unlocked, and two of them leave both new keys.
 * @see RFC 9068 §4, RFC 7517 §5.
 */
export function createMariaDbKeyStore(db: MariaDb, t: MariaDbTables, faults: MariaDbStoreFaults): SigningKeyStore {
  async function insert(q: Queryable, r: SigningKeyRecord): Promise<boolean> {
    try {
      await q.run(`INSERT INTO ${t.signingKeys} (kid, algorithm, private_key_pem, created_at) VALUES (?, ?, ?, ?)`, [
        r.kid, r.algorithm, r.privateKeyPem, r.createdAt,
      ]);
      return true;
    } catch (err) {
      // Never replaces a key: an existing kid leaves the record as it is.
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async function hasAny(q: Queryable): Promise<boolean> {
    const [row] = await q.rows<{ found: number }>(`SELECT EXISTS (SELECT 1 FROM ${t.signingKeys}) AS found`);
    return row?.found === 1;
  }

  return {
    async listSigningKeys() {
      const rows = await db.rows<SigningKeyRow>(
        `SELECT kid, algorithm, private_key_pem, created_at FROM ${t.signingKeys} ORDER BY created_at, kid`,
      );
      return rows.map((row) => ({
        kid: row.kid,
        algorithm: row.algorithm as SigningAlgorithm,
        privateKeyPem: row.private_key_pem,
        createdAt: row.created_at,
      }));
    },
    async saveSigningKey(record, options = {}) {
      const onlyIfNone = options.onlyIfNone === true;
      if (onlyIfNone && faults.nonAtomicOnlyIfNone === true) return !(await hasAny(db)) && insert(db, record);
      return db.transaction(async (tx) => {
        await tx.rows(`SELECT name FROM ${t.locks} WHERE name = 'signing_keys' FOR UPDATE`);
        if (onlyIfNone && (await hasAny(tx))) return false;
        return insert(tx, record);
      });
    },
    // Optional: lets rotateSigningKey({ leaked: true }) delete the old keys, and instances delete retired ones. The kid
    // is the primary key in a no-pad binary collation (EXACT_COLLATION), so the WHERE matches that kid alone, never a near twin.
    async deleteSigningKey(kid) {
      const { affectedRows } = await db.run(`DELETE FROM ${t.signingKeys} WHERE kid = ?`, [kid]);
      return affectedRows === 1;
    },
    // Optional: a leaked-key replacement in one step, so a failure leaves everything or nothing. Every key but the
    // record's goes (not only those a caller listed), under the lock row every key write takes.
    async replaceSigningKeys(record) {
      // FOR UPDATE in the transaction: a locking read, so a delete of one of them elsewhere waits, and none is answered twice.
      const others = (q: Queryable, lock = '') => q.rows<{ kid: string }>(`SELECT kid FROM ${t.signingKeys} WHERE kid <> ?${lock}`, [record.kid]);
      if (faults.nonAtomicReplaceSigningKeys === true) {
        const listed = await others(db);
        const deleted: string[] = [];
        for (const { kid } of listed) if ((await db.run(`DELETE FROM ${t.signingKeys} WHERE kid = ?`, [kid])).affectedRows === 1) deleted.push(kid);
        await insert(db, record);
        return deleted;
      }
      return db.transaction(async (tx) => {
        await tx.rows(`SELECT name FROM ${t.locks} WHERE name = 'signing_keys' FOR UPDATE`);
        const deleted = (await others(tx, ' FOR UPDATE')).map((row) => row.kid);
        await tx.run(`DELETE FROM ${t.signingKeys} WHERE kid <> ?`, [record.kid]);
        await insert(tx, record);
        return deleted;
      });
    },
  };
}
