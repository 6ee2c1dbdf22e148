// `oauth-admin clients import FILE`: brings existing integrations (with their original issue dates) into the store.
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { Option, type Command } from 'commander';
import type { ImportOutcome, ImportReport } from '../clients/import-clients.js';
import { createOAuthAdmin } from '../admin/create-oauth-admin.js';
import { vocabularyOption } from './scope-vocabulary.js';
import { ImportFileError, parseImportFile, type ImportFormat } from '../clients/import-file.js';
import { CliError, EXIT_USAGE } from './cli-error.js';
import { printJson } from './client-json.js';
import { withStore } from './with-store.js';
import { withAuditLog } from './audit-log.js';
import type { OAuthEvents } from '../events/oauth-events.js';
import { createMemoryStore } from '../stores/memory/index.js';
import type { Store } from '../stores/contract.js';

interface ImportOptions {
  readonly format?: ImportFormat;
  readonly skipInvalid?: boolean;
  readonly dryRun?: boolean;
  readonly json?: boolean;
}

const OUTCOMES: readonly ImportOutcome[] = ['created', 'would_create', 'unchanged', 'conflict', 'invalid'];

function formatOf(file: string, given: ImportFormat | undefined): ImportFormat {
  if (given) return given;
  const extension = extname(file).toLowerCase();
  if (extension === '.csv') return 'csv';
  if (extension === '.jsonl' || extension === '.ndjson') return 'jsonl';
  throw new CliError(`cannot tell the format of ${JSON.stringify(file)} from its name: give --format jsonl or --format csv`, EXIT_USAGE);
}

async function readInput(file: string): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CliError(`cannot read ${JSON.stringify(file)}${typeof code === 'string' ? ` (${code})` : ''}`, EXIT_USAGE);
  }
}

function counts(report: ImportReport): Record<ImportOutcome, number> {
  const tally = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<ImportOutcome, number>;
  for (const row of report.rows) tally[row.outcome] += 1;
  return tally;
}

function summary(report: ImportReport): string {
  const tally = counts(report);
  const parts = OUTCOMES.filter((o) => tally[o] > 0).map((o) => `${tally[o]} ${o.replace('_', ' ')}`);
  const what = parts.length > 0 ? parts.join(', ') : 'no rows';
  if (report.refused) {
    return `file refused, nothing written: ${what}. Fix the invalid and conflicting rows, or import the others with --skip-invalid`;
  }
  return report.dryRun ? `dry run, nothing written: ${what}` : `imported: ${what}`;
}

function printText(report: ImportReport): void {
  const lines = report.rows.map((row) => {
    const where = `line ${row.line}`.padEnd(10);
    const outcome = row.outcome.padEnd(13);
    return `${where}${outcome}${row.clientId ?? '(no client_id)'}${row.message ? `: ${row.message}` : ''}${row.warning ? ` (warning: ${row.warning})` : ''}`;
  });
  if (!report.refused) lines.push(summary(report));
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * Adds `import` to the `clients` command: reads JSON Lines or CSV, validates every row, refuses the whole
 * file on an invalid or conflicting row (exit 2, nothing written) unless `--skip-invalid`, then writes the new
 * integrations and reports every row (created, unchanged, conflict, invalid). Idempotent: running it again
 * reports every row `unchanged`. Like `create`, it creates the store if there is none (except `--dry-run`).
 * @see RFC 6749 §2 (client registration), §2.3.1 (client password); SPEC §9 (original issue dates).
 */
export function addClientsImportCommand(clients: Command): void {
  clients
    .command('import')
    .description('import existing integrations from a JSON Lines or CSV file (- for stdin), keeping their original issue dates')
    .argument('<file>', 'the file to import, or - for standard input')
    .addOption(new Option('--format <format>', 'file format (default: by extension, .jsonl/.ndjson or .csv)').choices(['jsonl', 'csv']))
    .option('--skip-invalid', 'import the valid rows even if other rows are invalid or in conflict')
    .option('--dry-run', 'check every row and report, write nothing')
    .option('--json', 'print the report as one JSON object')
    .action(async (file: string, options: ImportOptions) => {
      const format = formatOf(file, options.format);
      const text = await readInput(file);
      let records;
      try {
        records = parseImportFile(text, format);
      } catch (error) {
        if (error instanceof ImportFileError) throw new CliError(error.message, EXIT_USAGE);
        throw error;
      }
      // Rows are checked against OAUTH_SCOPES too, when set, read before any store is opened (a usage error otherwise).
      const vocabulary = vocabularyOption();
      const run = (store: Store, dryRun: boolean, events?: OAuthEvents) =>
        createOAuthAdmin(store, { ...vocabulary, ...(events ? { events } : {}) }).importClients(records, { skipInvalid: options.skipInvalid === true, dryRun });
      const dryRun = options.dryRun === true;
      // Each integration created is a `client.created` event with `imported: true` (OAUTH_AUDIT_LOG); a dry run creates none.
      // A dry run records nothing, so it needs no audit file (README: dry runs record nothing).
      const audited = dryRun ? <R>(work: (events: OAuthEvents | undefined) => Promise<R>) => work(undefined) : withAuditLog;
      const report = await audited(async (events) => {
        // Where there is no store yet, the file is checked against an empty one first: a dry run (the README's first
        // step) then creates none, and neither does a file refused as a whole.
        return withStore((store) => run(store, dryRun, events), { mustExist: true }).catch(async (error: unknown) => {
          if (!(error instanceof CliError) || error.code !== 'no_store') throw error;
          const checked = await run(createMemoryStore(), true);
          if (dryRun) return checked;
          return checked.refused ? { ...checked, dryRun: false } : withStore((store) => run(store, false, events));
        });
      });
      if (options.json) {
        printJson({
          dry_run: report.dryRun,
          refused: report.refused,
          counts: counts(report),
          rows: report.rows.map((row) => ({
            line: row.line, client_id: row.clientId, outcome: row.outcome, ...(row.message ? { message: row.message } : {}),
            ...(row.warning ? { warning: row.warning } : {}),
          })),
        });
      } else {
        printText(report);
      }
      if (report.refused) throw new CliError(summary(report), EXIT_USAGE);
    });
}
