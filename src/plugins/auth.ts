// Routes declare `{ auth: true }` and receive `principal`. The gate authenticated the request before
// routing (it must: every request, matched or not, is counted against its organisation's limit);
// this macro takes the route's credential from @elysiajs/bearer and admits the request only if it is
// the very key the gate vouched for.
import { Elysia } from 'elysia';
import { bearer } from '@elysiajs/bearer';
import { constantTimeEqual } from '../lib/ids.ts';
import { AppError } from '../lib/errors.ts';
import type { RequestStates } from './request-state.ts';
import type { Principal } from '../modules/keys/service.ts';

const unauthorized = () => new AppError('unauthorized', 'Authentication required', { 'www-authenticate': 'Bearer realm="revintel"' });

export function authPlugin(states: RequestStates) {
  return new Elysia({ name: 'revintel/auth' })
    .use(bearer())
    .macro({
      auth: {
        resolve({ request, bearer: token }): { principal: Principal } {
          const state = states.get(request);
          if (!state?.principal || !state.token || !token || !constantTimeEqual(token, state.token)) throw unauthorized();
          return { principal: state.principal };
        },
      },
    });
}
