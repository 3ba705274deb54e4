// GET/POST /api/users, PATCH /api/users/:id: an admin of the organisation, signed in to the console,
// invites people (each gets a one-time sign-in link, answered once), changes their role, disables
// them (their sessions end). Never with an API key (`who: 'admin-session'`, judged by the gate).
import { Elysia, t } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { transaction } from '../../db/transaction.ts';
import { ok } from '../../lib/envelope.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import { jsonBody } from '../../plugins/body.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { actorOf } from '../keys/service.ts';
import { ownOrigin } from '../auth/sessions.ts';
import { InvitedUser, InviteUser, PatchUser, UserParams, UserView } from './model.ts';
import { createUser, issueLink, listUsers, presentUser, signInLinkUrl, updateUser } from './service.ts';

const admins = { auth: 'key', counted: 'organisation', who: 'admin-session' } as const;

export const USER_ROUTES = {
  list: {
    ...admins,
    body: 'none',
    method: 'GET',
    path: '/api/users',
    response: t.Array(UserView),
    summary: "The organisation's console users (admins)",
  },
  invite: {
    ...admins,
    body: 'api',
    method: 'POST',
    path: '/api/users',
    response: InvitedUser,
    summary: 'Invite a console user: answers their one-time sign-in link, once (admins)',
  },
  patch: {
    ...admins,
    body: 'api',
    method: 'PATCH',
    path: '/api/users/:id',
    response: UserView,
    summary: "Change a user's role, disable or enable them (admins)",
  },
  link: {
    ...admins,
    body: 'none',
    method: 'POST',
    path: '/api/users/:id/link',
    response: InvitedUser,
    summary: 'A fresh one-time sign-in link for a user (a forgotten password, a lost invitation): answered once (admins)',
  },
} as const satisfies Record<string, RouteDeclaration>;

export function usersModule(deps: { database: Database; states: RequestStates; config: Config }) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;

  return new Elysia({ name: 'revintel/users' })
    .get(USER_ROUTES.list.path, async ({ request }) => ok((await listUsers(db, { orgId: principalOf(request).org.id })).map(presentUser)))
    .post(
      USER_ROUTES.invite.path,
      async ({ request, body, set }) => {
        const principal = principalOf(request);
        const { user, link } = await transaction(db, (tx) =>
          createUser(tx, { org: principal.org.id, email: body.email, name: body.name, role: body.role, actor: actorOf(principal) }),
        );
        set.status = 201;
        set.headers['cache-control'] = 'no-store';
        return ok({
          user: presentUser(user),
          sign_in_link: signInLinkUrl(ownOrigin(request, deps.config), link.token),
          link_expires_at: link.expiresAt.toISOString(),
        });
      },
      { body: InviteUser, parse: jsonBody(USER_ROUTES.invite, deps.config) },
    )
    .patch(
      USER_ROUTES.patch.path,
      async ({ request, params, body }) => {
        const principal = principalOf(request);
        const user = await transaction(db, (tx) =>
          updateUser(tx, {
            userId: params.id,
            orgId: principal.org.id,
            role: body.role,
            disabled: body.disabled,
            actor: actorOf(principal),
          }),
        );
        return ok(presentUser(user));
      },
      { body: PatchUser, params: UserParams, parse: jsonBody(USER_ROUTES.patch, deps.config) },
    )
    .post(
      USER_ROUTES.link.path,
      async ({ request, params, set }) => {
        const principal = principalOf(request);
        const { user, link } = await transaction(db, (tx) =>
          issueLink(tx, { userId: params.id, orgId: principal.org.id, actor: actorOf(principal) }),
        );
        set.status = 201;
        set.headers['cache-control'] = 'no-store';
        return ok({
          user: presentUser(user),
          sign_in_link: signInLinkUrl(ownOrigin(request, deps.config), link.token),
          link_expires_at: link.expiresAt.toISOString(),
        });
      },
      { params: UserParams },
    );
}
