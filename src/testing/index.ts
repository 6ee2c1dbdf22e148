// Public entry of "express-oauth-router/testing": the Store conformance suite for vitest, and the plain runner.
export { runStoreConformance } from './run-store-conformance.js';
export * from './check.js';
