// express-oauth-router/metrics: Prometheus metrics of the router (needs the prom-client peer dependency).
export { createOAuthMetrics } from './create-oauth-metrics.js';
export type { OAuthMetrics, OAuthMetricsOptions, OAuthMetricsBuckets } from './create-oauth-metrics.js';
export type { StoreCallOutcome, TimedPart } from './instrument-store.js';
export { DIAGNOSTICS_CHANNELS } from './channels.js';
