// CSMs (docs/agent-actions.md), the tasks executed actions give them and the notes on customers: reads and the
// CSM writes, scoped to one organisation.
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, rowsOf, type Db } from '../../db/client.ts';
import { andAll, limitTo } from '../../db/keyset.ts';
import type { CsmRole } from '../../db/schema/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { decodeCursor } from '../../lib/pagination.ts';
import type { CsmCreate, CsmPatch } from './model.ts';
import {
  CSM_COLUMNS,
  csmKeyset,
  NOTE_COLUMNS,
  noteKeyset,
  TASK_COLUMNS,
  taskKeyset,
  type CsmRow,
  type NoteRow,
  type TaskRow,
} from './rows.ts';

const after = (keyset: { after: (value: string | number | null, id: string) => SQL }, cursor: string | undefined): SQL[] => {
  if (!cursor) return [];
  const position = decodeCursor(cursor, 'created_at', 'timestamp');
  return [keyset.after(position.value, position.id)];
};

export async function listCsms(
  db: Db,
  input: { orgId: string; role?: CsmRole; active?: boolean; limit: number; cursor?: string },
): Promise<CsmRow[]> {
  const where: SQL[] = after(csmKeyset, input.cursor);
  if (input.role) where.push(sql`m.role = ${input.role}`);
  if (input.active !== undefined) where.push(sql`m.active = ${input.active}`);
  return queryRows<CsmRow>(
    db,
    sql`select ${CSM_COLUMNS} from csms m where m.org_id = ${input.orgId} ${andAll(where)} order by ${csmKeyset.order} ${limitTo(input.limit + 1)}`,
  );
}

export async function getCsm(db: Db, orgId: string, id: string): Promise<CsmRow> {
  const [row] = rowsOf<CsmRow>(await db.execute(sql`select ${CSM_COLUMNS} from csms m where m.org_id = ${orgId} and m.id = ${id}`));
  if (!row) throw notFound(`CSM ${id}`);
  return row;
}

const emailTaken = (email: string) =>
  new AppError('conflict', `Invalid field "email": a CSM with the e-mail ${email} already exists in this organisation`);

/** Creates a CSM; 409 when its e-mail is taken (e-mails are compared lower-cased). */
export async function createCsm(db: Db, orgId: string, input: CsmCreate): Promise<CsmRow> {
  const id = newId('csm');
  const email = input.email.toLowerCase();
  const inserted = rowsOf(
    await db.execute(sql`
      insert into csms (id, org_id, name, email, phone, slack_user_id, role, channels, active)
      values (${id}, ${orgId}, ${input.name ?? null}, ${email}, ${input.phone ?? null}, ${input.slack_user_id ?? null}, ${input.role ?? 'csm'},
              ${JSON.stringify(input.channels ?? [])}::jsonb, ${input.active ?? true})
      on conflict (org_id, email) do nothing returning id`),
  );
  if (inserted.length === 0) throw emailTaken(email);
  return getCsm(db, orgId, id);
}

/** Changes some of a CSM's fields (null clears a nullable one). */
export async function patchCsm(db: Db, orgId: string, id: string, patch: CsmPatch): Promise<CsmRow> {
  const sets: SQL[] = [];
  if (patch.email !== undefined) sets.push(sql`email = ${patch.email.toLowerCase()}`);
  if (patch.name !== undefined) sets.push(sql`name = ${patch.name}`);
  if (patch.phone !== undefined) sets.push(sql`phone = ${patch.phone}`);
  if (patch.slack_user_id !== undefined) sets.push(sql`slack_user_id = ${patch.slack_user_id}`);
  if (patch.role !== undefined) sets.push(sql`role = ${patch.role}`);
  if (patch.channels !== undefined) sets.push(sql`channels = ${JSON.stringify(patch.channels)}::jsonb`);
  if (patch.active !== undefined) sets.push(sql`active = ${patch.active}`);
  if (sets.length === 0) return getCsm(db, orgId, id);
  if (patch.email !== undefined) {
    const [other] = rowsOf<{ id: string }>(
      await db.execute(sql`select id from csms where org_id = ${orgId} and email = ${patch.email.toLowerCase()} and id <> ${id}`),
    );
    if (other) throw emailTaken(patch.email.toLowerCase());
  }
  const updated = rowsOf(
    await db.execute(
      sql`update csms set ${sql.join(sets, sql`, `)}, updated_at = now() where org_id = ${orgId} and id = ${id} returning id`,
    ),
  );
  if (updated.length === 0) throw notFound(`CSM ${id}`);
  return getCsm(db, orgId, id);
}

export async function listTasks(
  db: Db,
  input: { orgId: string; csmId?: string; customerId?: string; status?: 'open' | 'done'; limit: number; cursor?: string },
): Promise<TaskRow[]> {
  const where: SQL[] = after(taskKeyset, input.cursor);
  if (input.csmId) where.push(sql`k.csm_id = ${input.csmId}`);
  if (input.customerId) where.push(sql`k.customer_id = ${input.customerId}`);
  if (input.status) where.push(sql`k.status = ${input.status}`);
  return queryRows<TaskRow>(
    db,
    sql`select ${TASK_COLUMNS} from tasks k where k.org_id = ${input.orgId} ${andAll(where)} order by ${taskKeyset.order} ${limitTo(input.limit + 1)}`,
  );
}

/** A customer's notes, newest first; 404 for a customer the organisation does not have. */
export async function listNotes(db: Db, input: { orgId: string; customerId: string; limit: number; cursor?: string }): Promise<NoteRow[]> {
  const [customer] = rowsOf(
    await db.execute(sql`select 1 from customers where org_id = ${input.orgId} and id = ${input.customerId} and deleted_at is null`),
  );
  if (!customer) throw notFound(`Customer ${input.customerId}`);
  const where: SQL[] = after(noteKeyset, input.cursor);
  return queryRows<NoteRow>(
    db,
    sql`select ${NOTE_COLUMNS} from customer_notes n where n.org_id = ${input.orgId} and n.customer_id = ${input.customerId} ${andAll(where)} order by ${noteKeyset.order} ${limitTo(input.limit + 1)}`,
  );
}
