// Entry of "express-oauth-router/testing/check": the conformance rules and their runner, without vitest.
export { checkStoreConformance } from './check-store-conformance.js';
export { CONFORMANCE_RULES } from './conformance-rules.js';
export { DEFAULT_RACE_ROUNDS, RACE_SCHEDULES } from './interleave.js';
export { PEER_LATENCY_LIMIT_MS } from './conformance-revocation-feed.js';
export type { RaceSchedule } from './interleave.js';
export type {
  ConformanceReport,
  ConformanceRule,
  RuleContext,
  SimulateOutage,
  StoreConformanceOptions,
} from './conformance-types.js';
