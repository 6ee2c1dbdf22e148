// Debian's Chromium for the page tests: where it is, and how to start it on a machine with a closed network.
import { chromium, type Browser } from 'playwright-core';

/** `OAUTH_TEST_CHROMIUM` (/usr/bin/chromium in CI); the browser suites are skipped when it is unset. */
export const CHROMIUM = process.env.OAUTH_TEST_CHROMIUM;

/**
 * Starts headless Chromium. The flags keep it from reaching out to Google's services at start, which a closed
 * network refuses many times over, and from sandboxing, which needs privileges CI runs without.
 */
export function launchChromium(): Promise<Browser> {
  if (!CHROMIUM) throw new Error('set OAUTH_TEST_CHROMIUM=/usr/bin/chromium to run the browser tests');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
