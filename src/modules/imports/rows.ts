// From a record read off an import file to the input of the write services: the same schemas as
// POST (one definition of every field), with what a file needs on top of them:
//   - CSV cells are text: typed by their column's schema (integers, booleans, JSON objects), an
//     empty cell is null where the field may be empty and absent otherwise;
//   - customers' CSM as `csm_name`, `csm_email`, `csm_phone`, `csm_slack_user_id` columns, and
//     `metadata.<key>` columns for metadata (or one `metadata` column of JSON);
//   - times without a zone (spreadsheets write them) are read as UTC, a bare date as midnight UTC;
//   - every row must carry its `external_id`: that is how a re-run finds it.
import type { TObject, TSchema } from '@sinclair/typebox';
import { CustomerCreate } from '../customers/model.ts';
import { ContractCreate } from '../contracts/model.ts';
import { InvoiceCreate } from '../invoices/model.ts';
import { validator } from '../../lib/validation.ts';
import { jsonValueProblem } from '../../lib/json.ts';
import { ImportFileError, type ReadRecord } from './read.ts';

export const IMPORT_ENTITIES = ['customers', 'contracts', 'invoices'] as const;
export type ImportEntity = (typeof IMPORT_ENTITIES)[number];

const SCHEMAS: Record<ImportEntity, TObject> = {
  customers: CustomerCreate,
  contracts: ContractCreate,
  invoices: InvoiceCreate,
};

const CSM_COLUMNS = ['csm_name', 'csm_email', 'csm_phone', 'csm_slack_user_id'];

/** What a field's schema says about its values, seen through Optional and "or null". */
function describeField(schema: TSchema): { type: string; format?: string; nullable: boolean } {
  const options = (schema as { anyOf?: TSchema[] }).anyOf;
  if (options) {
    const nonNull = options.filter((option) => (option as { type?: string }).type !== 'null');
    const nullable = nonNull.length < options.length;
    const first = nonNull[0] as { type?: string; format?: string; const?: unknown } | undefined;
    // A union of literals (an enum) is text.
    return { type: first?.const !== undefined ? 'string' : (first?.type ?? 'string'), format: first?.format, nullable };
  }
  const s = schema as { type?: string; format?: string };
  return { type: s.type ?? 'string', format: s.format, nullable: false };
}

/** The CSV columns an entity's file may have. */
function knownColumns(entity: ImportEntity): string[] {
  const fields = Object.keys(SCHEMAS[entity].properties);
  return entity === 'customers' ? [...fields.filter((f) => f !== 'csm'), ...CSM_COLUMNS] : fields;
}

/** Refuses a CSV header with a column the entity does not have (every row would fail on it). */
export function checkHeader(entity: ImportEntity, columns: string[]): void {
  const known = knownColumns(entity);
  const unknown = columns.filter((c) => !known.includes(c) && !c.startsWith('metadata.'));
  if (unknown.length > 0) {
    throw new ImportFileError(
      `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((c) => `"${c}"`).join(', ')} in the CSV header; ${entity} columns are: ${known.join(', ')}, metadata.<key>`,
    );
  }
  if (!columns.includes('external_id'))
    throw new ImportFileError('the CSV header has no external_id column: import rows are matched by their external_id');
}

const BOOLEAN_WORDS: Record<string, boolean> = {
  true: true,
  false: false,
  yes: true,
  no: false,
  '1': true,
  '0': false,
  t: true,
  f: false,
  y: true,
  n: false,
};

/** One CSV cell, typed by its field's schema; undefined leaves the field out. */
function typedCell(cell: string, field: { type: string; nullable: boolean }): unknown {
  if (cell === '') return field.nullable ? null : undefined;
  if (field.type === 'integer' && /^-?\d+$/.test(cell.trim())) return Number(cell.trim());
  if (field.type === 'boolean') return BOOLEAN_WORDS[cell.trim().toLowerCase()] ?? cell;
  if (field.type === 'object') {
    try {
      return JSON.parse(cell);
    } catch {
      return cell; // the schema names the field
    }
  }
  return cell;
}

/** A time the way spreadsheets and exports write it, as the API's ISO 8601 with a zone. */
function withZone(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T00:00:00Z`;
  const match = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2}(\.\d+)?)?$/.exec(value);
  return match ? `${match[1]}T${match[2]}${match[3] ?? ':00'}Z` : value;
}

type PreparedRow = { row: number; input: Record<string, unknown> } | { row: number; error: string };

/** Prepares import rows of one entity: typed, checked against its schema, ready to write. */
export function rowPreparer(entity: ImportEntity): (record: ReadRecord) => PreparedRow {
  const schema = SCHEMAS[entity];
  const check = validator(schema);
  const fields = Object.fromEntries(Object.entries(schema.properties).map(([name, field]) => [name, describeField(field as TSchema)]));
  return (record) => {
    if (record.error !== undefined || !record.values) return { row: record.row, error: record.error ?? 'cannot be read' };
    const input: Record<string, unknown> = {};
    for (const [name, raw] of Object.entries(record.values)) {
      if (record.fromCsv && name.startsWith('metadata.')) {
        if (raw !== '') ((input.metadata ??= {}) as Record<string, unknown>)[name.slice('metadata.'.length)] = raw;
      } else if (record.fromCsv && entity === 'customers' && CSM_COLUMNS.includes(name)) {
        if (raw !== '') ((input.csm ??= {}) as Record<string, unknown>)[name.slice('csm_'.length)] = raw;
      } else {
        const field = fields[name];
        const value = record.fromCsv && field ? typedCell(String(raw), field) : raw;
        if (value !== undefined) input[name] = field?.format === 'instant' ? withZone(value) : value;
      }
    }
    const unstorable = jsonValueProblem(input);
    if (unstorable) return { row: record.row, error: `Invalid field "${unstorable.field}": ${unstorable.problem}` };
    const problem = check(input);
    if (problem) return { row: record.row, error: problem };
    if (input.external_id === undefined || input.external_id === null) {
      return {
        row: record.row,
        error: 'Invalid field "external_id": is required (an import matches rows by it, so a re-run updates instead of duplicating)',
      };
    }
    return { row: record.row, input };
  };
}
