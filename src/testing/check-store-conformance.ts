// Runs the Store conformance rules outside any test runner and reports which pass, fail or do not apply.
import type { Store } from '../stores/contract.js';
import type { ConformanceReport, StoreConformanceOptions } from './conformance-types.js';
import { checkConformanceOptions, selectRules } from './conformance-options.js';
import { CONFORMANCE_RULES } from './conformance-rules.js';
import { probeStore, runRule, skipReason, type StoreShape } from './run-rule.js';

/**
 * Runs every rule of the Store contract (or those `options.only` accepts) against stores from
 * `options.createStore`, one fresh store per rule, one rule after the other, and resolves a report: no test
 * runner needed (node:test, mocha, jest, a CI script). It never rejects because of a rule: a broken rule
 * lands in `failed` with its assertion error. `runStoreConformance` documents the rule groups and the hooks.
 *
 * A rule is skipped when the store lacks its tier (one store from `createStore` is looked at first) or,
 * for the outage rule, when `simulateOutage` is not supplied; `skipped` says why.
 *
 * @example
 * ```ts
 * import { checkStoreConformance } from 'express-oauth-router/testing';
 * const report = await checkStoreConformance({
 *   name: 'mariadb',
 *   createStore: () => createMariaDbStore({ database: await freshDatabase() }),
 *   destroyStore: async (store) => { await store.close?.(); await dropDatabase(); },
 *   simulateOutage: async (store) => { await proxy.cut(); return () => proxy.restore(); },
 * });
 * for (const { rule, error } of report.failed) console.error(`✗ ${rule}\n  ${error.message}`);
 * process.exitCode = report.failed.length > 0 ? 1 : 0;
 * ```
 * @see RFC 6749 §4.1.2, §10.3–10.5, RFC 7009 §2.1 (what the rules hold a store to).
 */
export async function checkStoreConformance<S extends Store>(typed: StoreConformanceOptions<S>): Promise<ConformanceReport> {
  const report: ConformanceReport = { passed: [], failed: [], skipped: [] };
  const options = checkConformanceOptions(typed);
  const rules = selectRules(CONFORMANCE_RULES, options);
  if (rules.length === 0) return report;
  let shape: StoreShape | null;
  try {
    shape = await probeStore(options);
  } catch (err) {
    // No store at all: every rule fails with the reason.
    const error = asError(err, 'createStore() failed');
    for (const rule of rules) report.failed.push({ rule: rule.name, error });
    return report;
  }
  for (const rule of rules) {
    const reason = skipReason(rule, options, shape);
    if (reason !== null) {
      report.skipped.push({ rule: rule.name, reason });
      continue;
    }
    try {
      await runRule(rule, options);
      report.passed.push(rule.name);
    } catch (err) {
      report.failed.push({ rule: rule.name, error: asError(err, 'the rule threw a non-Error') });
    }
  }
  return report;
}

function asError(err: unknown, what: string): Error {
  return err instanceof Error ? err : new Error(`${what}: ${String(err)}`, { cause: err });
}
