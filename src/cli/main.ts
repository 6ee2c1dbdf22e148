#!/usr/bin/env node
// Entry point of the oauth-admin command (package.json "bin").
import { runCli } from './run-cli.js';

// exitCode rather than process.exit(): pending stdout writes are flushed before the process ends.
process.exitCode = await runCli(process.argv.slice(2));
