// Who is signed in: GET /api/me, shared by every page through a tiny store.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, setCsrfToken, whenUnauthorized } from './api.ts';
import type { Me } from './models.ts';

export type Session = { state: 'loading' } | { state: 'signed-out'; error?: string } | { state: 'signed-in'; me: Me };

let session: Session = { state: 'loading' };
const listeners = new Set<(s: Session) => void>();

function set(next: Session): void {
  session = next;
  for (const listener of listeners) listener(session);
}

/** Asks the server who we are (after sign-in, accept, sign-out, or at start). */
export async function refreshSession(): Promise<Session> {
  try {
    const { data } = await api<Me>('GET', '/api/me');
    setCsrfToken(data.csrf_token);
    set({ state: 'signed-in', me: data });
  } catch (error) {
    setCsrfToken(null);
    set(
      error instanceof ApiError && error.status === 401
        ? { state: 'signed-out' }
        : { state: 'signed-out', error: error instanceof Error ? error.message : String(error) },
    );
  }
  return session;
}

export function signedOut(): void {
  setCsrfToken(null);
  set({ state: 'signed-out' });
}

// A session that ended meanwhile: back to the sign-in form (the page's path is kept for after).
whenUnauthorized(() => set({ state: 'signed-out', error: 'Your session has ended: sign in again.' }));

export function useSession(): Session {
  const [current, setCurrent] = useState(session);
  useEffect(() => {
    listeners.add(setCurrent);
    setCurrent(session);
    return () => void listeners.delete(setCurrent);
  }, []);
  return current;
}

export const isAdmin = (s: Session): boolean => s.state === 'signed-in' && s.me.user?.role === 'admin';
