// Options of the example MariaDB store, checked once, and the fault switches that exist only for the suite's tests.

/**
 * Deliberate bugs, each reproducing a fault a real adapter shipped with (issue 7, part 3). They exist ONLY to
 * prove that the conformance suite catches each of them; never set one outside that test.
 */
export interface MariaDbStoreFaults {
  /** `saveTokens` reads the tombstones in separate queries, then inserts in a transaction of its own. */
  readonly revokedCheckOutsideTransaction?: boolean;
  /** Tables use MariaDB's default `utf8mb4_general_ci` (case-insensitive, PAD SPACE) instead of `utf8mb4_nopad_bin`. */
  readonly caseInsensitiveIds?: boolean;
  /** Driver errors (connection refused, lost, timed out) are rethrown as they are, not as StoreUnavailableError. */
  readonly rawDriverErrors?: boolean;
  /** `saveSigningKey({ onlyIfNone })` counts the keys in one query and inserts in another, with no lock. */
  readonly nonAtomicOnlyIfNone?: boolean;
  /** `replaceSigningKeys` reads the keys, then deletes those it read and inserts, each a statement of its own, unlocked. */
  readonly nonAtomicReplaceSigningKeys?: boolean;
}

/** Options of `createMariaDbStore`. */
export interface MariaDbStoreOptions {
  /** `mysql://user:password@host:3306/database`. The database must exist; the store creates its tables. */
  readonly url: string;
  /** Prefix of every table name (letters, digits, `_`), so several stores can share a database. Default `''`. */
  readonly tablePrefix?: string;
  /** Pool size. Default 10. */
  readonly maxConnections?: number;
  /**
   * Milliseconds before a connection attempt, a query or a lock wait gives up with StoreUnavailableError
   * (the router answers 503). Default 5000.
   */
  readonly queryTimeoutMs?: number;
  /** Seconds between sweeps of expired codes, tokens and tombstones; `0` disables the sweeper. Default 60. */
  readonly sweepIntervalSeconds?: number;
  /** Deliberate bugs for the suite's own tests: see `MariaDbStoreFaults`. */
  readonly faults?: MariaDbStoreFaults;
}

/** The options with defaults applied. */
export interface ResolvedMariaDbOptions {
  readonly url: string;
  readonly tablePrefix: string;
  readonly maxConnections: number;
  readonly queryTimeoutMs: number;
  readonly sweepIntervalSeconds: number;
  readonly faults: MariaDbStoreFaults;
}

const PREFIX = /^[A-Za-z0-9_]{0,20}$/;

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) {
    throw new TypeError(`createMariaDbStore: option "${name}" must be a non-negative number (got ${String(value)})`);
  }
  return value;
}

/**
 * Validates the options once; the prefix is spliced into SQL, so only plain identifier characters pass.
 * @throws TypeError naming the offending option.
 */
export function resolveMariaDbOptions(options: MariaDbStoreOptions): ResolvedMariaDbOptions {
  if (typeof options.url !== 'string' || !options.url.startsWith('mysql://')) {
    throw new TypeError('createMariaDbStore: option "url" must be a mysql:// URL');
  }
  const tablePrefix = options.tablePrefix ?? '';
  if (!PREFIX.test(tablePrefix)) {
    throw new TypeError(`createMariaDbStore: option "tablePrefix" must match ${PREFIX} (got ${JSON.stringify(tablePrefix)})`);
  }
  return {
    url: options.url,
    tablePrefix,
    maxConnections: nonNegative('maxConnections', options.maxConnections, 10) || 10,
    queryTimeoutMs: nonNegative('queryTimeoutMs', options.queryTimeoutMs, 5000) || 5000,
    sweepIntervalSeconds: nonNegative('sweepIntervalSeconds', options.sweepIntervalSeconds, 60),
    faults: options.faults ?? {},
  };
}
