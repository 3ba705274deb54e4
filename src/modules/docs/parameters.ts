// What each path and query parameter means, by name, for the OpenAPI document: the routes validate
// them (their schemas say the type), this says what they are for. A parameter the routes read as
// text and parse themselves (`limit`, the number bounds) gets the schema a client should send here,
// from the same constants the parser uses. A new parameter without an entry fails the OpenAPI test.
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../lib/pagination.ts';
import { RISK_BANDS } from '../../db/schema/index.ts';
import { PROBABILITY_RANGE } from '../predictions/model.ts';
import { SENTIMENT_RANGE } from '../tickets/api/model.ts';

type Schema = Record<string, unknown>;
interface ParameterDoc {
  description: string | ((path: string) => string);
  /** The schema a client sends, where the route's own is text it parses. */
  schema?: Schema;
  example?: unknown;
}

/** `/api/agent-actions/{id}/approve` -> "agent action". */
function recordOf(path: string, name: string): string {
  const segments = path.split('/').filter((part) => part && part !== 'api');
  const at = segments.indexOf(`{${name}}`);
  const owner = at > 0 ? segments[at - 1]! : (segments[0] ?? 'record');
  const words = owner.replace(/-/g, ' ');
  return words === 'csms' ? 'CSM' : words.endsWith('ies') ? `${words.slice(0, -3)}y` : words.replace(/s$/, '');
}

const PARAMETER_DOCS: Record<string, ParameterDoc> = {
  id: { description: (path) => `The ${recordOf(path, 'id')}'s id, as its list or its creation answered it` },
  customer_id: { description: (path) => (path.includes('{customer_id}') ? "The customer's id" : 'Only those of this customer (its id)') },
  batch_id: { description: 'The import batch id (`tib_…`) that the upload answered', example: 'tib_8fJ2kQ' },
  file: { description: "The asset's file name, as the console's page links it (hashed: `app-<hash>.js`)" },
  limit: {
    description: `How many records a page holds (default ${DEFAULT_PAGE_SIZE})`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
    example: 20,
  },
  cursor: { description: 'Where the page starts: `meta.next_cursor` of the previous page (opaque)' },
  status: { description: 'Only records with this status' },
  type: { description: 'Only actions of this type' },
  csm_id: { description: 'Only those assigned to this CSM (its id)' },
  csm_email: { description: 'Only customers whose CSM has this e-mail (case-insensitive)', example: 'ann@example.com' },
  risk: {
    description: `Only these risk bands: a comma list of ${RISK_BANDS.join(', ')}`,
    example: 'high,critical',
  },
  min_probability: {
    description: 'Only predictions whose churn probability is at least this',
    schema: { type: 'number', minimum: PROBABILITY_RANGE.min, maximum: PROBABILITY_RANGE.max },
    example: 0.5,
  },
  sentiment_below: {
    description: 'Only tickets whose sentiment score is below this',
    schema: { type: 'number', minimum: SENTIMENT_RANGE.min, maximum: SENTIMENT_RANGE.max },
    example: -0.3,
  },
  currency: { description: 'Only amounts in this currency (ISO 4217)', example: 'EUR' },
  q: { description: 'Only customers whose name contains this text (case-insensitive)', example: 'acme' },
  sort: { description: 'The order of the list; `-` first for descending' },
  segment: { description: 'Only customers of this segment' },
  ending_before: { description: 'Only contracts ending before this day' },
  ending_after: { description: 'Only contracts ending after this day' },
  renewing_before: { description: 'Only customers with a renewal before this day' },
  updated_since: { description: 'Only records changed at or after this time (for incremental sync; deleted ones too, with `deleted_at`)' },
  include_deleted: { description: 'Also the deleted records (`deleted_at` set); by default they are left out' },
  role: { description: 'Only CSMs with this role' },
  active: { description: 'Only active (true) or inactive (false) CSMs' },
  endpoint_id: { description: 'Only deliveries to this endpoint (its id)' },
  event_type: { description: 'Only deliveries of this event type' },
  contract_id: { description: 'Only invoices of this contract (its id)' },
  overdue: { description: 'Only invoices past their due date and not paid (true), or not overdue (false)' },
  issued_after: { description: 'Only invoices issued at or after this time' },
  issued_before: { description: 'Only invoices issued before this time' },
  connector_id: { description: 'Only those that came through this connector (its id)' },
  connectorId: {
    description: 'The connector the event is for (its id, from `revintel connectors create` or the console); an unknown one is a 404',
    example: 'con_3Jd9sLq0',
  },
  churn_signal: { description: 'Only tickets carrying this churn signal' },
};

export function describeParameter(name: string, path: string): { description?: string; schema?: Schema; example?: unknown } {
  const doc = PARAMETER_DOCS[name];
  if (!doc) return {};
  return {
    description: typeof doc.description === 'function' ? doc.description(path) : doc.description,
    ...(doc.schema ? { schema: doc.schema } : {}),
    ...(doc.example !== undefined ? { example: doc.example } : {}),
  };
}
