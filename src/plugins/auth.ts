// Routes declare `{ auth: true }` and receive `principal`. The gate authenticated the request before
// routing (it must: every request, matched or not, is counted against its organisation's limit),
// reading the key with @elysiajs/bearer's extraction (plugins/bearer-token.ts); this macro makes a
// route's dependence on that explicit and typed, and refuses if the gate did not vouch for the
// caller.
import { Elysia } from 'elysia';
import { AppError } from '../lib/errors.ts';
import type { RequestStates } from './request-state.ts';
import type { Principal } from '../modules/keys/service.ts';

const unauthorized = () => new AppError('unauthorized', 'Authentication required', { 'www-authenticate': 'Bearer realm="revintel"' });

export function authPlugin(states: RequestStates) {
  return new Elysia({ name: 'revintel/auth' })
    .macro({
      auth: {
        resolve({ request }): { principal: Principal } {
          const principal = states.get(request)?.principal;
          if (!principal) throw unauthorized();
          return { principal };
        },
      },
    });
}
