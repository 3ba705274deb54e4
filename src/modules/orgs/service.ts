import { asc, eq } from 'drizzle-orm';
import { organisations, type Organisation, type Plan } from '../../db/schema/index.ts';
import type { Db } from '../../db/client.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Limits } from '../../lib/rate-limiter.ts';
import { recordAudit } from '../audit/service.ts';

/** The plans' limits (docs/api.md "Rate limits"): the one place they are written down. */
const PLAN_LIMITS: Record<Plan, Limits> = {
  growth_agents: { perMinute: 60, perDay: 10_000 },
  enterprise: { perMinute: 300, perDay: 100_000 },
};

/** The limits in force for an organisation: its plan's, unless the operator overrode them. */
export function limitsOf(org: Pick<Organisation, 'plan' | 'rateLimitPerMinute' | 'rateLimitPerDay'>): Limits {
  const plan = PLAN_LIMITS[org.plan];
  return { perMinute: org.rateLimitPerMinute ?? plan.perMinute, perDay: org.rateLimitPerDay ?? plan.perDay };
}

export interface CreateOrgInput {
  name: string;
  plan: Plan;
  rateLimitPerMinute?: number | null;
  rateLimitPerDay?: number | null;
  actor: string;
}

export async function createOrg(db: Db, input: CreateOrgInput): Promise<Organisation> {
  const name = validName(input.name);
  const [existing] = await db.select({ id: organisations.id }).from(organisations).where(eq(organisations.name, name));
  if (existing) throw new AppError('conflict', `an organisation named "${name}" already exists (${existing.id})`);
  const [org] = await db
    .insert(organisations)
    .values({
      id: newId('org'),
      name,
      plan: input.plan,
      rateLimitPerMinute: input.rateLimitPerMinute ?? null,
      rateLimitPerDay: input.rateLimitPerDay ?? null,
    })
    .returning();
  await recordAudit(db, {
    orgId: org!.id,
    actor: input.actor,
    action: 'org.created',
    targetType: 'organisation',
    targetId: org!.id,
    details: { name, plan: input.plan, rate_limit_per_minute: org!.rateLimitPerMinute, rate_limit_per_day: org!.rateLimitPerDay },
  });
  return org!;
}

export function listOrgs(db: Db): Promise<Organisation[]> {
  return db.select().from(organisations).orderBy(asc(organisations.createdAt), asc(organisations.id));
}

/** `--org` takes an id or the exact name (names cannot look like ids, so the two never clash). */
export async function findOrg(db: Db, idOrName: string): Promise<Organisation> {
  const [org] = await db
    .select()
    .from(organisations)
    .where(idOrName.startsWith('org_') ? eq(organisations.id, idOrName) : eq(organisations.name, idOrName));
  if (!org) throw notFound(`Organisation "${idOrName}"`);
  return org;
}

function validName(raw: string): string {
  const name = raw.trim();
  if (!name) throw new AppError('validation_failed', 'name must not be empty');
  if (name.startsWith('org_')) throw new AppError('validation_failed', 'name must not start with "org_" (that is how ids start)');
  if (name.length > 200) throw new AppError('validation_failed', 'name must be at most 200 characters');
  return name;
}

export interface UpdateOrgInput {
  org: string;
  name?: string;
  plan?: Plan;
  /** null clears an override (back to the plan's limit); undefined leaves it. */
  rateLimitPerMinute?: number | null;
  rateLimitPerDay?: number | null;
  actor: string;
}

export async function updateOrg(db: Db, input: UpdateOrgInput): Promise<Organisation> {
  const org = await findOrg(db, input.org);
  const changes: Partial<Organisation> = {};
  if (input.name !== undefined && input.name.trim() !== org.name) {
    const name = validName(input.name);
    const [clash] = await db.select({ id: organisations.id }).from(organisations).where(eq(organisations.name, name));
    if (clash) throw new AppError('conflict', `an organisation named "${name}" already exists (${clash.id})`);
    changes.name = name;
  }
  if (input.plan !== undefined && input.plan !== org.plan) changes.plan = input.plan;
  if (input.rateLimitPerMinute !== undefined && input.rateLimitPerMinute !== org.rateLimitPerMinute)
    changes.rateLimitPerMinute = input.rateLimitPerMinute;
  if (input.rateLimitPerDay !== undefined && input.rateLimitPerDay !== org.rateLimitPerDay) changes.rateLimitPerDay = input.rateLimitPerDay;
  if (Object.keys(changes).length === 0) return org;
  const [updated] = await db
    .update(organisations)
    .set({ ...changes, updatedAt: new Date() })
    .where(eq(organisations.id, org.id))
    .returning();
  await recordAudit(db, {
    orgId: org.id,
    actor: input.actor,
    action: 'org.updated',
    targetType: 'organisation',
    targetId: org.id,
    details: Object.fromEntries(Object.entries(changes).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v])),
  });
  return updated!;
}
