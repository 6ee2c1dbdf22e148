// Public entry of "express-oauth-router/testing": the Store conformance suite for custom stores.
export { runStoreConformance } from './store-conformance.js';
export type { StoreConformanceOptions } from './store-conformance.js';
