// Salesforce has no standard JSON webhook: a Flow HTTP callout or Apex sends a body its author
// defines. We expect the Case under "case" with Salesforce's field names (Id, CaseNumber, Subject,
// …), a bare Case record (Apex's JSON.serialize gives {attributes:{type:"Case"}, Id, …}) or an array
// of them. Outbound Messages are SOAP XML and not supported.
import {
  MAX_TICKETS_PER_BODY,
  at,
  buildTicket,
  emailOf,
  firstOf,
  isRecord,
  labelOf,
  own,
  parseTimestamp,
  plainText,
  textOf,
  toText,
  tooManyEvents,
  type JsonObject,
} from './fields.ts';
import { found, platformAdapter, refused, unrecognised, type Reading } from './generic.ts';
import type { AdapterInput } from './types.ts';

const EXPECTED = 'a Salesforce Case as JSON: {"case":{"Id":…}}, a Case record or an array of them';

/** A field by its Salesforce name (`Subject`), or the lower-case name a Flow author may have chosen. */
const caseField = (record: JsonObject, name: string): unknown => own(record, name) ?? own(record, name.toLowerCase());

const isCaseRecord = (value: unknown): value is JsonObject =>
  isRecord(value) &&
  (at(value, 'attributes', 'type') === 'Case' || (own(value, 'Id') !== undefined && own(value, 'CaseNumber') !== undefined));

const caseIn = (value: unknown): JsonObject | null => {
  const wrapped = own(value, 'case') ?? own(value, 'Case');
  if (isRecord(wrapped)) return wrapped;
  return isCaseRecord(value) ? value : null;
};

const fromCase = (record: JsonObject) =>
  buildTicket({
    // The 18-character Id; CaseNumber is the one people quote.
    externalId: toText(caseField(record, 'Id')),
    subject: textOf(caseField(record, 'Subject')),
    description: plainText(caseField(record, 'Description')),
    // `New`, `Working`, `Escalated`, `Closed`, or an org's own values.
    status: labelOf(caseField(record, 'Status')),
    priority: labelOf(caseField(record, 'Priority')),
    // SuppliedEmail is what the customer typed (web-to-case, email-to-case); ContactEmail is the
    // linked contact's.
    requesterEmail: firstOf(
      [own(record, 'SuppliedEmail'), own(record, 'ContactEmail'), at(record, 'Contact', 'Email'), own(record, 'email')],
      emailOf,
    ),
    createdAt: parseTimestamp(caseField(record, 'CreatedDate')),
    updatedAt: firstOf([caseField(record, 'LastModifiedDate'), own(record, 'SystemModstamp')], parseTimestamp),
  });

const readSalesforce = (input: AdapterInput): Reading => {
  const body = own(input, 'body');
  if (typeof body === 'string' && body.trimStart().startsWith('<')) {
    return refused(
      'Salesforce Outbound Messages (SOAP XML) are not supported: send the Case as JSON from a Flow or Apex HTTP callout, e.g. {"case":{"Id":…}}',
    );
  }
  const list = Array.isArray(body) ? body : Array.isArray(own(body, 'cases')) ? (own(body, 'cases') as unknown[]) : null;
  if (list !== null && list.length > MAX_TICKETS_PER_BODY) return refused(tooManyEvents(list.length, 'cases'));
  const cases = (list ?? [body]).map(caseIn).filter((record): record is JsonObject => record !== null);
  if (cases.length === 0) return unrecognised(EXPECTED);
  // A case without `Id` may still be a hand-written body the generic detection reads (`id`, `subject`).
  return found(cases.map(fromCase), () => unrecognised(EXPECTED));
};

export const salesforceAdapter = platformAdapter('salesforce', readSalesforce);
