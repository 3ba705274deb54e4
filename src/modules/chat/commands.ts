// What a CSM may ask the bot by mentioning it (docs/chat-platforms.md "Slack"): `status <customer>`,
// `actions <customer>`, `note <customer>: text` and `help`. Only CSMs of the workspace's
// organisation get here; the answer goes to the mention's thread.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { OPEN_ACTION_STATUSES } from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { proposalText } from './facts.ts';

export const HELP_TEXT = [
  'I answer these, mentioned with a customer name:',
  '• `status <customer>`: ARR, churn risk and open actions',
  '• `actions <customer>`: the open agent actions',
  '• `note <customer>: text`: adds a note to the customer',
  '• `help`: this list',
].join('\n');

const OPEN = sql.raw(OPEN_ACTION_STATUSES.map((s) => `'${s}'`).join(', '));

interface Found {
  id: string;
  name: string;
}

/** The customer named `name`: an exact (case-blind) name, else the only one whose name starts with it. */
async function findCustomer(db: Db, orgId: string, name: string): Promise<Found | string> {
  const exact = rowsOf<Found>(
    await db.execute(
      sql`select id, name from customers where org_id = ${orgId} and deleted_at is null and lower(name) = lower(${name}) order by id limit 2`,
    ),
  );
  if (exact.length === 1) return exact[0]!;
  const escaped = name.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
  const prefix = rowsOf<Found>(
    await db.execute(
      sql`select id, name from customers where org_id = ${orgId} and deleted_at is null and lower(name) like ${`${escaped}%`} order by name, id limit 6`,
    ),
  );
  if (prefix.length === 1) return prefix[0]!;
  if (exact.length + prefix.length === 0) return `No customer is named "${name}".`;
  return `"${name}" names several customers: ${[...exact, ...prefix]
    .slice(0, 5)
    .map((c) => `${c.name} (${c.id})`)
    .join(', ')}. Say which.`;
}

async function openActions(db: Db, orgId: string, customerId: string) {
  return rowsOf<{ id: string; type: string; params: Record<string, unknown>; status: string }>(
    await db.execute(
      sql`select id, type, params, status from agent_actions where org_id = ${orgId} and customer_id = ${customerId} and status in (${OPEN}) order by created_at, id`,
    ),
  );
}

/** The answer to one mention's text. */
export async function runCommand(db: Db, orgId: string, rawText: string, csm: { id: string; email: string }): Promise<string> {
  const text = rawText.replace(/<@[A-Z0-9]+(\|[^>]*)?>/g, '').trim();
  const match = /^(status|actions|note|help)\b\s*(.*)$/is.exec(text);
  if (!match) return `I did not understand "${text.slice(0, 100)}".\n${HELP_TEXT}`;
  const verb = match[1]!.toLowerCase();
  const rest = match[2]!.trim();
  if (verb === 'help') return HELP_TEXT;
  if (verb === 'note') {
    const colon = rest.indexOf(':');
    if (colon <= 0 || !rest.slice(colon + 1).trim()) return 'Write it as `note <customer>: text`.';
    const found = await findCustomer(db, orgId, rest.slice(0, colon).trim());
    if (typeof found === 'string') return found;
    const body = rest
      .slice(colon + 1)
      .trim()
      .slice(0, 4000);
    await db.execute(
      sql`insert into customer_notes (id, org_id, customer_id, author, body) values (${newId('note')}, ${orgId}, ${found.id}, ${`csm:${csm.email}`}, ${body})`,
    );
    return `Noted on ${found.name}.`;
  }
  if (!rest) return `Name the customer: \`${verb} <customer>\`.`;
  const found = await findCustomer(db, orgId, rest);
  if (typeof found === 'string') return found;
  const actions = await openActions(db, orgId, found.id);
  const listed = actions.map((a) => `• ${proposalText(a)} — ${a.status.replace('_', ' ')} (${a.id})`);
  if (verb === 'actions')
    return actions.length === 0 ? `${found.name} has no open action.` : [`Open actions for ${found.name}:`, ...listed].join('\n');
  const [p] = rowsOf<{ arr: string | number; currency: string; risk: string; probability: number }>(
    await db.execute(sql`select arr, currency, risk, probability from predictions where org_id = ${orgId} and customer_id = ${found.id}`),
  );
  const risk = p
    ? `ARR ${p.currency} ${(Number(p.arr) / 100).toLocaleString('en-US', { maximumFractionDigits: 0 })}, ${p.risk} risk (${Math.round(Number(p.probability) * 100)}% churn probability)`
    : 'not scored yet';
  return [`*${found.name}*: ${risk}; ${actions.length} open action${actions.length === 1 ? '' : 's'}.`, ...listed].join('\n');
}
