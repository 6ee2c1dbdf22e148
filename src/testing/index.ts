// Public entry of "express-oauth-router/testing": the Store conformance suite for vitest, and the plain runner.
export { runStoreConformance } from './run-store-conformance.js';
export { checkStoreConformance } from './check-store-conformance.js';
export { CONFORMANCE_RULES } from './conformance-rules.js';
export { DEFAULT_RACE_ROUNDS, RACE_SCHEDULES } from './interleave.js';
export type { RaceSchedule } from './interleave.js';
export type {
  ConformanceReport,
  ConformanceRule,
  RuleContext,
  SimulateOutage,
  StoreConformanceOptions,
} from './conformance-types.js';
