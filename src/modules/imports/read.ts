// Reading an import file as a stream of records, whatever its format, without holding it in
// memory: CSV (a header row, then one record per row; csv-parse), a JSON array (each element;
// @streamparser/json) or NDJSON (one JSON object per line). A record that cannot be read is
// reported with its number and the file goes on; only a file that cannot be read past a point (a
// quote never closed, a broken JSON array) ends early, and says where.
import { createReadStream } from 'node:fs';
import { parse as parseCsv } from 'csv-parse';
import { JSONParser } from '@streamparser/json';

const IMPORT_FORMATS = ['csv', 'json', 'ndjson'] as const;
type ImportFormat = (typeof IMPORT_FORMATS)[number];

export interface ReadRecord {
  /** 1-based: the first record (after a CSV's header, the first element of a JSON array, the
   * first non-empty line of NDJSON) is row 1. */
  row: number;
  values?: Record<string, unknown>;
  /** The record could not be read (its values are absent). */
  error?: string;
  /** Read from CSV: every value is text, to be typed by the columns' schemas. */
  fromCsv: boolean;
}

export class ImportFileError extends Error {}

/** The format of `path`, from `--format` or the file's extension. */
export function formatOf(path: string, flag: string | undefined): ImportFormat {
  if (flag !== undefined) {
    if (!(IMPORT_FORMATS as readonly string[]).includes(flag))
      throw new ImportFileError(`--format must be one of ${IMPORT_FORMATS.join(', ')}, got "${flag}"`);
    return flag as ImportFormat;
  }
  const extension = /\.([a-z]+)$/i.exec(path)?.[1]?.toLowerCase();
  if (extension === 'csv') return 'csv';
  if (extension === 'json') return 'json';
  if (extension === 'ndjson' || extension === 'jsonl') return 'ndjson';
  throw new ImportFileError(`cannot tell the format of ${path} from its extension: pass --format csv|json|ndjson`);
}

interface ReadOptions {
  /** Called with every chunk's size as it is read (progress). */
  onBytes?: (bytes: number) => void;
  /** Called with a CSV's header before any record: throw to refuse the file. */
  onHeader?: (columns: string[]) => void;
}

export function readImportFile(path: string, format: ImportFormat, options: ReadOptions = {}): AsyncIterable<ReadRecord> {
  const source = createReadStream(path);
  if (options.onBytes) source.on('data', (chunk) => options.onBytes!(chunk.length));
  if (format === 'csv') return readCsv(source, options);
  if (format === 'json') return readJsonArray(source);
  return readNdjson(source);
}

async function* readCsv(source: NodeJS.ReadableStream, options: ReadOptions): AsyncIterable<ReadRecord> {
  const skipped: { record: number; message: string }[] = [];
  const parser = source.pipe(
    parseCsv({
      bom: true, // spreadsheets write one
      skip_empty_lines: true,
      relax_column_count: true, // checked below, per row, so one short row does not end the file
      relax_quotes: true, // a stray quote inside a field is kept as text
      skip_records_with_error: true,
      info: true,
    }),
  );
  parser.on('skip', (error: Error & { records?: number }) => skipped.push({ record: error.records ?? 0, message: error.message }));
  let header: string[] | null = null;
  let row = 0;
  const flushSkipped = function* () {
    while (skipped.length > 0) yield { row: ++row, error: `CSV: ${skipped.shift()!.message}`, fromCsv: true } satisfies ReadRecord;
  };
  for await (const { record } of parser as AsyncIterable<{ record: string[] }>) {
    if (header === null) {
      header = record.map((name) => name.trim());
      const seen = new Set<string>();
      for (const name of header) {
        if (name === '') throw new ImportFileError('the CSV header has an empty column name');
        if (seen.has(name)) throw new ImportFileError(`the CSV header names the column "${name}" twice`);
        seen.add(name);
      }
      options.onHeader?.(header);
      continue;
    }
    yield* flushSkipped();
    row++;
    if (record.length !== header.length) {
      yield { row, error: `has ${record.length} fields, the header has ${header.length}`, fromCsv: true };
      continue;
    }
    const values: Record<string, unknown> = {};
    header.forEach((name, i) => (values[name] = record[i]));
    yield { row, values, fromCsv: true };
  }
  yield* flushSkipped();
  if (header === null) throw new ImportFileError('the file is empty: a CSV import starts with a header row');
}

async function* readJsonArray(source: NodeJS.ReadableStream): AsyncIterable<ReadRecord> {
  const parser = new JSONParser({ paths: ['$.*'], keepStack: false });
  const ready: unknown[] = [];
  parser.onValue = ({ value }) => ready.push(value);
  let opened = false;
  let row = 0;
  const drain = function* () {
    for (const value of ready.splice(0)) yield recordOf(++row, value);
  };
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      if (!opened) {
        // The first character (after a BOM and blanks) says whether the file is an array at all.
        const bytes = chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? chunk.subarray(3) : chunk;
        const first = bytes.find((byte) => byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09);
        if (first === undefined) continue;
        if (first !== 0x5b /* [ */) throw new ImportFileError('a JSON import is an array of records: the file must start with [');
        opened = true;
        parser.write(bytes);
      } else {
        parser.write(chunk);
      }
      yield* drain();
    }
    if (opened && !parser.isEnded) parser.end(); // it ends itself when the array closes
  } catch (error) {
    if (error instanceof ImportFileError) throw error;
    throw new ImportFileError(`the JSON cannot be read after record ${row}: ${(error as Error).message}`);
  }
  yield* drain();
  if (!opened) throw new ImportFileError('the file is empty: a JSON import is an array of records');
}

async function* readNdjson(source: NodeJS.ReadableStream): AsyncIterable<ReadRecord> {
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  let row = 0;
  const lines = function* (text: string, final: boolean) {
    pending += text;
    const parts = pending.split('\n');
    pending = final ? '' : parts.pop()!;
    for (const line of parts) {
      const trimmed = line.replace(/^\uFEFF/, '').trim();
      if (trimmed === '') continue;
      row++;
      let value: unknown;
      try {
        value = JSON.parse(trimmed);
      } catch (error) {
        yield { row, error: `not valid JSON: ${(error as Error).message}`, fromCsv: false } satisfies ReadRecord;
        continue;
      }
      yield recordOf(row, value);
    }
  };
  for await (const chunk of source as AsyncIterable<Buffer>) yield* lines(decoder.decode(chunk, { stream: true }), false);
  yield* lines(decoder.decode(), true);
}

function recordOf(row: number, value: unknown): ReadRecord {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { row, error: 'is not a JSON object', fromCsv: false };
  return { row, values: value as Record<string, unknown>, fromCsv: false };
}
