// People of an organisation (docs/api.md "Users and the console sign-in"): created by the operator (`revintel users create`) or invited by
// an admin from the console, each with a one-time sign-in link; their passwords and sessions.
// Every query is scoped to an organisation, but the operator's (the CLI's), who may name any user.
import { and, asc, count, eq, gt, isNull, ne, or, sql } from 'drizzle-orm';
import {
  organisations,
  sessions,
  signInLinks,
  users,
  USER_ROLES,
  type Organisation,
  type User,
  type UserRole,
} from '../../db/schema/index.ts';
import type { Db } from '../../db/client.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { newId, randomBase62 } from '../../lib/ids.ts';
import { sha256Hex } from '../../lib/digest.ts';
import { recordAudit } from '../audit/service.ts';
import { findOrg } from '../orgs/service.ts';

/** A sign-in link lasts a day; a session 12 h without use and 7 days at most. */
const LINK_TTL_MS = 24 * 3_600_000;
export const SESSION_IDLE_MS = 12 * 3_600_000;
export const SESSION_ABSOLUTE_MS = 7 * 24 * 3_600_000;
const MIN_PASSWORD_LENGTH = 10;
/** Bun.password refuses more than this (argon2's own bound is far higher; nobody types more). */
const MAX_PASSWORD_LENGTH = 1024;

/** Opaque tokens (links, sessions): 43 base62 characters, about 256 random bits; kept as SHA-256. */
const newToken = () => randomBase62(43);

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type UserStatus = 'invited' | 'active' | 'disabled';
const userStatus = (user: Pick<User, 'disabledAt' | 'passwordHash'>): UserStatus =>
  user.disabledAt ? 'disabled' : user.passwordHash ? 'active' : 'invited';

/** The API's (and the CLI's) view of a user: never the password's hash. */
export function presentUser(user: User) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    status: userStatus(user),
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
    disabled_at: user.disabledAt?.toISOString() ?? null,
  };
}

function checkRole(role: string): UserRole {
  if (!(USER_ROLES as readonly string[]).includes(role))
    throw new AppError('validation_failed', `role must be one of ${USER_ROLES.join(', ')}, got "${role}"`);
  return role as UserRole;
}

export function checkPassword(password: unknown): string {
  if (typeof password !== 'string' || password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError('validation_failed', `password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > MAX_PASSWORD_LENGTH)
    throw new AppError('validation_failed', `password must be at most ${MAX_PASSWORD_LENGTH} characters`);
  return password;
}

interface IssuedLink {
  token: string;
  expiresAt: Date;
}

async function issueLinkFor(db: Db, user: User, actor: string): Promise<IssuedLink> {
  if (user.disabledAt) throw new AppError('conflict', `user ${user.id} is disabled: enable them before sending a sign-in link`);
  const token = newToken();
  const expiresAt = new Date(Date.now() + LINK_TTL_MS);
  await db
    .insert(signInLinks)
    .values({ id: newId('lnk'), tokenHash: sha256Hex(token), userId: user.id, orgId: user.orgId, createdBy: actor, expiresAt });
  return { token, expiresAt };
}

export interface CreateUserInput {
  /** An organisation id, or (the operator's) its exact name. */
  org: string;
  email: string;
  name?: string | null;
  role: string;
  actor: string;
}

/** Creates the user and their first sign-in link (the token returned once; only its hash is kept). */
export async function createUser(db: Db, input: CreateUserInput): Promise<{ user: User; link: IssuedLink }> {
  const org = await findOrg(db, input.org);
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw new AppError('validation_failed', `email must be an e-mail address, got "${input.email}"`);
  const role = checkRole(input.role);
  const name = input.name?.trim() || null;
  const [user] = await db
    .insert(users)
    .values({ id: newId('usr'), orgId: org.id, email, name, role })
    .onConflictDoNothing({ target: [users.orgId, users.email] })
    .returning();
  if (!user) throw new AppError('conflict', `a user with the e-mail ${email} already exists in this organisation`);
  await recordAudit(db, {
    orgId: org.id,
    actor: input.actor,
    action: 'user.created',
    targetType: 'user',
    targetId: user.id,
    details: { email, role },
  });
  return { user, link: await issueLinkFor(db, user, input.actor) };
}

export async function listUsers(db: Db, filter: { org?: string; orgId?: string } = {}): Promise<User[]> {
  const orgId = filter.orgId ?? (filter.org ? (await findOrg(db, filter.org)).id : undefined);
  return db
    .select()
    .from(users)
    .where(orgId ? eq(users.orgId, orgId) : undefined)
    .orderBy(asc(users.createdAt), asc(users.id));
}

/** A user by id, in `orgId` when given (an admin's request); another organisation's is not found. */
async function findUser(db: Db, userId: string, orgId?: string): Promise<User> {
  const [user] = await db
    .select()
    .from(users)
    .where(orgId ? and(eq(users.id, userId), eq(users.orgId, orgId)) : eq(users.id, userId));
  if (!user) throw notFound(`User ${userId}`);
  return user;
}

/** A fresh sign-in link (a forgotten password, a lost invitation). Earlier links stay valid until they expire. */
export async function issueLink(
  db: Db,
  input: { userId: string; orgId?: string; actor: string },
): Promise<{ user: User; link: IssuedLink }> {
  const user = await findUser(db, input.userId, input.orgId);
  const link = await issueLinkFor(db, user, input.actor);
  await recordAudit(db, {
    orgId: user.orgId,
    actor: input.actor,
    action: 'user.link_issued',
    targetType: 'user',
    targetId: user.id,
    details: { expires_at: link.expiresAt.toISOString() },
  });
  return { user, link };
}

interface UpdateUserInput {
  userId: string;
  /** Set for an admin's request: the user must be in this organisation. */
  orgId?: string;
  role?: string;
  disabled?: boolean;
  actor: string;
}

/** Changes a role or disables (ends every session) or enables a user. In the console the
 * organisation keeps at least one active admin: demoting or disabling the last one is a 409. The
 * operator (the CLI, no `orgId`) may, and can always make a new admin with `revintel users create`. */
export async function updateUser(db: Db, input: UpdateUserInput): Promise<User> {
  // Locked: two admins demoting each other at once must not leave the organisation without one.
  const [user] = await db
    .select()
    .from(users)
    .where(input.orgId ? and(eq(users.id, input.userId), eq(users.orgId, input.orgId)) : eq(users.id, input.userId))
    .for('update');
  if (!user) throw notFound(`User ${input.userId}`);
  const role = input.role === undefined ? user.role : checkRole(input.role);
  const disabled = input.disabled === undefined ? user.disabledAt !== null : input.disabled;
  const wasActiveAdmin = user.role === 'admin' && !user.disabledAt;
  if (input.orgId && wasActiveAdmin && (role !== 'admin' || disabled)) {
    await db.execute(sql`select id from ${users} where ${users.orgId} = ${user.orgId} and ${users.role} = 'admin' for update`);
    const [others] = await db
      .select({ n: count() })
      .from(users)
      .where(and(eq(users.orgId, user.orgId), eq(users.role, 'admin'), isNull(users.disabledAt), ne(users.id, user.id)));
    if ((others?.n ?? 0) === 0) {
      throw new AppError('conflict', `${user.email} is the last active admin of the organisation: make another user an admin first`);
    }
  }
  const now = new Date();
  const [changed] = await db
    .update(users)
    .set({ role, disabledAt: disabled ? (user.disabledAt ?? now) : null, updatedAt: now })
    .where(eq(users.id, user.id))
    .returning();
  const base = { orgId: user.orgId, actor: input.actor, targetType: 'user' as const, targetId: user.id };
  if (role !== user.role) await recordAudit(db, { ...base, action: 'user.role_changed', details: { from: user.role, to: role } });
  if (disabled && !user.disabledAt) {
    const ended = await endUserSessions(db, user.id);
    await recordAudit(db, { ...base, action: 'user.disabled', details: { sessions_ended: ended } });
  }
  if (!disabled && user.disabledAt) await recordAudit(db, { ...base, action: 'user.enabled' });
  return changed!;
}

// --- sign-in ------------------------------------------------------------------------------------

export interface SignedIn {
  user: User;
  org: Organisation;
  /** The session cookie's token: returned once, kept as its hash. */
  token: string;
  sessionId: string;
  expiresAt: Date;
}

async function startSession(db: Db, user: User, org: Organisation, via: 'link' | 'password'): Promise<SignedIn> {
  const token = newToken();
  const now = Date.now();
  const expiresAt = new Date(now + SESSION_ABSOLUTE_MS);
  const id = newId('ses');
  await db.insert(sessions).values({
    id,
    tokenHash: sha256Hex(token),
    userId: user.id,
    orgId: org.id,
    createdAt: new Date(now),
    lastSeenAt: new Date(now),
    expiresAt,
  });
  await recordAudit(db, {
    orgId: org.id,
    actor: `user:${user.id}`,
    action: 'user.signed_in',
    targetType: 'user',
    targetId: user.id,
    details: { via, session_id: id },
  });
  return { user, org, token, sessionId: id, expiresAt };
}

const linkRefused = (message: string) => new AppError('unauthorized', message);

/** Why a sign-in link cannot be used (null: it can): unknown, used, expired, or its user disabled. */
function linkProblem(
  found: { link: { usedAt: Date | null; expiresAt: Date }; user: { disabledAt: Date | null } } | undefined,
): AppError | null {
  if (!found) return linkRefused('This sign-in link is not valid: ask an admin for a new one');
  const { link, user } = found;
  if (link.usedAt)
    return linkRefused('This sign-in link has already been used: sign in with your password, or ask an admin for a new link');
  if (link.expiresAt.getTime() <= Date.now())
    return linkRefused(`This sign-in link expired at ${link.expiresAt.toISOString()}: ask an admin for a new one`);
  if (user.disabledAt) return linkRefused('This account is disabled');
  return null;
}

/** Refuses a link that cannot be used, before its new password is hashed (argon2 is the costly part:
 * a stranger's made-up tokens must cost a lookup, no more). Found by the token's SHA-256. */
export async function checkLinkUsable(db: Db, token: string): Promise<void> {
  const [found] = await db
    .select({ link: { usedAt: signInLinks.usedAt, expiresAt: signInLinks.expiresAt }, user: { disabledAt: users.disabledAt } })
    .from(signInLinks)
    .innerJoin(users, eq(users.id, signInLinks.userId))
    .where(eq(signInLinks.tokenHash, sha256Hex(token)));
  const problem = linkProblem(found);
  if (problem) throw problem;
}

/** Uses a sign-in link up: sets the password (already hashed by the caller, outside the
 * transaction: argon2 takes tens of ms) and starts a session. The link is judged again under its
 * lock: it may have been used meanwhile. */
export async function acceptLink(db: Db, input: { token: string; passwordHash: string }): Promise<SignedIn> {
  const [found] = await db
    .select({ link: signInLinks, user: users, org: organisations })
    .from(signInLinks)
    .innerJoin(users, eq(users.id, signInLinks.userId))
    .innerJoin(organisations, eq(organisations.id, signInLinks.orgId))
    .where(eq(signInLinks.tokenHash, sha256Hex(input.token)))
    .for('update', { of: signInLinks });
  const problem = linkProblem(found);
  if (problem) throw problem;
  const { link, user, org } = found!;
  const now = new Date();
  await db.update(signInLinks).set({ usedAt: now }).where(eq(signInLinks.id, link.id));
  // A new password (a forgotten one): whoever signed in with the old one is signed out.
  if (user.passwordHash) await endUserSessions(db, user.id);
  const [updated] = await db
    .update(users)
    .set({ passwordHash: input.passwordHash, updatedAt: now })
    .where(eq(users.id, user.id))
    .returning();
  return startSession(db, updated!, org, 'link');
}

/** The one account a sign-in with this e-mail checks the password of: an enabled user with a
 * password, in `organisation` (its id or exact name) when given, else the oldest such user of any
 * organisation. One account, so one argon2 verification, however many organisations the e-mail
 * belongs to: the answer's time says nothing about how many. */
export async function signInAccount(db: Db, email: string, organisation?: string): Promise<{ user: User; org: Organisation } | null> {
  const [found] = await db
    .select({ user: users, org: organisations })
    .from(users)
    .innerJoin(organisations, eq(organisations.id, users.orgId))
    .where(
      and(
        eq(users.email, email.trim().toLowerCase()),
        isNull(users.disabledAt),
        sql`${users.passwordHash} is not null`,
        organisation === undefined ? undefined : or(eq(organisations.id, organisation), eq(organisations.name, organisation)),
      ),
    )
    .orderBy(asc(users.createdAt), asc(users.id))
    .limit(1);
  return found ?? null;
}

/** Starts a session for a user whose password was verified (re-checking they were not disabled meanwhile). */
export async function signInVerified(db: Db, input: { userId: string }): Promise<SignedIn> {
  const [found] = await db
    .select({ user: users, org: organisations })
    .from(users)
    .innerJoin(organisations, eq(organisations.id, users.orgId))
    .where(and(eq(users.id, input.userId), isNull(users.disabledAt)));
  if (!found) throw new AppError('unauthorized', 'Wrong e-mail or password');
  return startSession(db, found.user, found.org, 'password');
}

// --- sessions -----------------------------------------------------------------------------------

/** Ends one session of the organisation's (signing out). */
export async function endSession(db: Db, input: { sessionId: string; orgId: string }): Promise<void> {
  await db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(and(eq(sessions.id, input.sessionId), eq(sessions.orgId, input.orgId), isNull(sessions.revokedAt)));
}

/** Ends every live session of a user; the number ended. */
async function endUserSessions(db: Db, userId: string): Promise<number> {
  const ended = await db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, new Date())))
    .returning({ id: sessions.id });
  return ended.length;
}

export async function signOutEverywhere(db: Db, input: { userId: string; orgId: string }): Promise<number> {
  await findUser(db, input.userId, input.orgId);
  const ended = await endUserSessions(db, input.userId);
  await recordAudit(db, {
    orgId: input.orgId,
    actor: `user:${input.userId}`,
    action: 'user.signed_out_everywhere',
    targetType: 'user',
    targetId: input.userId,
    details: { sessions_ended: ended },
  });
  return ended;
}

/** The address a sign-in link opens: the token in the fragment, which browsers never send, so it
 * reaches no server's logs; the console's page posts it to POST /api/auth/accept. */
export const signInLinkUrl = (base: string, token: string) => `${base.replace(/\/+$/, '')}/sign-in/accept#token=${token}`;
