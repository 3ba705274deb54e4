// Routes declare `{ auth: true }` and receive `principal`. The gate has already authenticated the
// request (it must, to rate-limit it by organisation); this macro makes the route's dependence on it
// explicit and typed, and refuses if the gate did not vouch for the caller.
import { Elysia } from 'elysia';
import { AppError } from '../lib/errors.ts';
import type { RequestStates } from './request-state.ts';
import type { Principal } from '../modules/keys/service.ts';

export function authPlugin(states: RequestStates) {
  return new Elysia({ name: 'revintel/auth' }).macro({
    auth: {
      resolve({ request }): { principal: Principal } {
        const principal = states.get(request)?.principal;
        if (!principal) throw new AppError('unauthorized', 'Authentication required', { 'www-authenticate': 'Bearer realm="revintel"' });
        return { principal };
      },
    },
  });
}
