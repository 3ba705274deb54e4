import { statSync } from 'node:fs';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, parseCommand, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';
import { nextSizeByTime } from '../db/units-of-work.ts';
import { formatOf, ImportFileError, readImportFile } from '../modules/imports/read.ts';
import { checkHeader, IMPORT_ENTITIES, rowPreparer, type ImportEntity } from '../modules/imports/rows.ts';
import type { BatchResult } from '../modules/imports/service.ts';

const OPTIONS: OptionSpecs = {
  org: {
    ...{ type: 'string', value: 'ORG', description: 'an organisation id or its exact name' },
    default: 'the only organisation, when there is one',
  },
  format: {
    type: 'string',
    value: 'FORMAT',
    description: 'csv, json or ndjson',
    default: "from the file's extension (.csv, .json, .ndjson/.jsonl)",
  },
  'batch-size': {
    type: 'string',
    value: 'N',
    description:
      'rows per transaction (through a running server on the embedded database, at most: there batches are sized to take about 50 ms)',
    default: '1000',
  },
};

const HELP = helpText({
  usage: 'revintel import <customers|contracts|invoices> FILE [--org ORG] [--format csv|json|ndjson]',
  about: `Creates or updates records from FILE, matched by their external_id: a CSV with a header row, a
JSON array of objects, or NDJSON (one object per line). Contracts and invoices name their customer by
customer_external_id or customer_id (invoices their contract by contract_external_id or contract_id).
docs/arr-data.md ("Importing ARR data") shows every column.

Rows are written in batches, each in its own transaction: a bad row is reported and skipped, never
the batch; a crash leaves every committed batch in place, and running the same file again updates
nothing that is already there. Ends with a report: created, updated, unchanged, rejected (with row
numbers and reasons; row 1 is the first record after the header).

Exit status: 0 every row imported, 3 some rows rejected (the others are imported), 1 the import
could not run or stopped early (what was committed stays), 2 bad usage.`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

/** Batches through a running server (nextSizeByTime): from 25 rows, aiming at 30 ms each (at
 * 50 ms, batches reached 130 ms on the embedded database, and /healthz p99 220 ms during an
 * import: bench:isolation). */
const THROUGH_SERVER = { targetMs: 30, min: 25, first: 100 };

/** How many rejected rows a human report lists (--json lists them all). */
const REPORT_LIMIT = 50;

interface Report {
  entity: ImportEntity;
  file: string;
  org_id: string;
  org: string;
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
  rejected_rows: { row: number; reason: string }[];
  seconds: number;
  rows_per_second: number;
  /** Set when the file could not be read to its end: what came before it was imported. */
  stopped?: string;
}

/** A progress bar on a terminal, a plain line every 10% otherwise; both on stderr. */
function progressReporter(totalBytes: number, label: string) {
  const tty = Boolean(process.stderr.isTTY);
  const started = performance.now();
  let bytes = 0;
  let lastDraw = 0;
  let lastDecile = -1;
  return {
    bytes: (n: number) => (bytes += n),
    rows(rows: number, final = false) {
      const fraction = totalBytes > 0 ? Math.min(1, bytes / totalBytes) : 1;
      const rate = Math.round(rows / Math.max(0.001, (performance.now() - started) / 1000));
      if (tty) {
        if (!final && performance.now() - lastDraw < 100) return;
        lastDraw = performance.now();
        const width = 30;
        const filled = Math.round(fraction * width);
        process.stderr.write(
          `\r${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.floor(fraction * 100)}%  ${rows.toLocaleString('en')} rows  ${rate.toLocaleString('en')} rows/s ${final ? '\n' : ''}`,
        );
      } else {
        const decile = Math.floor(fraction * 10);
        if (decile > lastDecile || final) {
          lastDecile = decile;
          process.stderr.write(`${label}: ${Math.floor(fraction * 100)}% of the file, ${rows} rows, ${rate} rows/s\n`);
        }
      }
    },
  };
}

export async function importCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [entity, file, ...extra] = cmd.positionals;
  if (!entity || !(IMPORT_ENTITIES as readonly string[]).includes(entity)) {
    throw new UsageError(`import what? one of ${IMPORT_ENTITIES.join(', ')}\n\n${HELP}`);
  }
  if (!file || extra.length > 0) throw new UsageError(`import ${entity} takes one FILE\n\n${HELP}`);
  const batchSize = cmd.values['batch-size'] === undefined ? 1000 : Number(cmd.values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new UsageError(`--batch-size must be an integer from 1 to 10000, got "${String(cmd.values['batch-size'])}"`);
  }
  let format;
  let size: number;
  try {
    format = formatOf(file, typeof cmd.values.format === 'string' ? cmd.values.format : undefined);
    size = statSync(file).size;
  } catch (error) {
    throw new UsageError(error instanceof ImportFileError ? error.message : `cannot read ${file}: ${(error as Error).message}`);
  }
  const kind = entity as ImportEntity;

  const report = await withAdminSession(cmd.config(), 'import', async ({ runner, via }) => {
    const org = await runner.run('import.target', { org: typeof cmd.values.org === 'string' ? cmd.values.org : undefined });
    const started = performance.now();
    const progress = progressReporter(size, `importing ${kind}`);
    const prepare = rowPreparer(kind);
    const totals: Report = {
      entity: kind,
      file,
      org_id: org.id,
      org: org.name,
      rows: 0,
      created: 0,
      updated: 0,
      unchanged: 0,
      rejected: 0,
      rejected_rows: [],
      seconds: 0,
      rows_per_second: 0,
    };
    const reject = (row: number, reason: string) => {
      totals.rejected++;
      totals.rejected_rows.push({ row, reason });
    };
    const tally = (result: BatchResult) => {
      totals.created += result.created;
      totals.updated += result.updated;
      totals.unchanged += result.unchanged;
      for (const r of result.rejected) reject(r.row, r.reason);
    };
    // One batch in the database while the next is read and checked. Through a running server on
    // the embedded database each batch holds that database (every tenant's requests wait behind
    // it): there a batch is sized by the time the last one took, up to --batch-size.
    const sizing = via === 'server' ? { ...THROUGH_SERVER, max: batchSize } : null;
    let limit = sizing ? Math.min(batchSize, THROUGH_SERVER.first) : batchSize;
    let inFlight: Promise<void> = Promise.resolve();
    let batch: { row: number; input: Record<string, unknown> }[] = [];
    const send = async () => {
      const rows = batch;
      batch = [];
      await inFlight;
      const started = performance.now();
      inFlight = runner.run('import.batch', { entity: kind, orgId: org.id, rows }).then((result) => {
        // The batch's own time in the database, not the wait for its turn too (db/units-of-work.ts timed).
        if (sizing) limit = nextSizeByTime(rows.length, result.ms ?? performance.now() - started, sizing);
        tally(result);
      });
    };
    try {
      for await (const record of readImportFile(file, format, {
        onBytes: progress.bytes,
        onHeader: (columns) => checkHeader(kind, columns),
      })) {
        totals.rows++;
        const prepared = prepare(record);
        if ('error' in prepared) reject(prepared.row, prepared.error);
        else batch.push(prepared);
        if (batch.length >= limit) await send();
        progress.rows(totals.rows);
      }
      if (batch.length > 0) await send();
      await inFlight;
    } catch (error) {
      // A file that cannot be read further: the rows read before that point are imported, and
      // the report says where it stopped.
      if (!(error instanceof ImportFileError)) {
        await inFlight.catch(() => {});
        throw error;
      }
      totals.stopped = error.message;
      if (batch.length > 0) await send();
      await inFlight;
    }
    progress.rows(totals.rows, true);
    if (totals.created + totals.updated > 0)
      await runner.run('import.finish', { entity: kind, sample: via === 'server' ? 'small' : 'full' });
    totals.seconds = Math.round((performance.now() - started) / 10) / 100;
    totals.rows_per_second = Math.round(totals.rows / Math.max(0.001, totals.seconds));
    totals.rejected_rows.sort((a, b) => a.row - b.row);
    return totals;
  });

  cmd.print(report, (r) => {
    const lines = [
      `imported ${r.entity} from ${r.file} into "${r.org}" (${r.org_id}): ${r.rows} rows in ${r.seconds} s (${r.rows_per_second} rows/s)`,
      `  created ${r.created}, updated ${r.updated}, unchanged ${r.unchanged}, rejected ${r.rejected}`,
    ];
    for (const rejected of r.rejected_rows.slice(0, REPORT_LIMIT)) lines.push(`  row ${rejected.row}: ${rejected.reason}`);
    if (r.rejected_rows.length > REPORT_LIMIT)
      lines.push(`  … and ${r.rejected_rows.length - REPORT_LIMIT} more rejected rows (--json lists them all)`);
    if (r.stopped) lines.push(`stopped early: ${r.stopped}. Rows before that point were imported; fix the file and run it again.`);
    return lines.join('\n');
  });
  if (report.stopped) process.exit(1);
  if (report.rejected > 0) process.exit(3);
}
