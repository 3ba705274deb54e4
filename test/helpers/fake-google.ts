// A fake Google on a real port (Bun.serve, port 0), speaking Google's protocols: Google's OAuth keys
// as a JWKS (a key made for the run with jose) and chat@system.gserviceaccount.com's x509
// certificates (a test certificate from the fixtures), both with Cache-Control max-age; the token
// endpoint, which checks the service account's JWT bearer grant (RS256 signature with the test
// service account's key, issuer, audience, scope) before it hands out an access token; and the Chat
// API's spaces.messages.create (idempotent on requestId, as Google's is) and patch, which want that
// token. Every call is recorded (when answered); a script per endpoint answers 429 with Retry-After
// or 5xx first, or answers late.
// It also signs tokens as Google does, for the tests to send.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, exportPKCS8, generateKeyPair, importPKCS8, jwtVerify, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { tempDir } from './harness.ts';

const FIXTURES = new URL('../fixtures/google-chat/', import.meta.url);

export interface GoogleCall {
  endpoint: 'jwks' | 'x509' | 'token' | 'create' | 'patch';
  method: string;
  path: string;
  query: Record<string, string>;
  token: string | null;
  body: Record<string, any>;
  answered: number;
}

export interface GoogleScripted {
  status: number;
  headers?: Record<string, string>;
  /** A create that Google carried out before its answer was lost (a timeout, a 5xx on the way). */
  commit?: boolean;
  /** Answer only after this long (with status 200: the usual answer, late). */
  delayMs?: number;
}

export async function fakeGoogle() {
  let jwtKeys = await generateKeyPair('RS256', { extractable: true });
  let jwk = { ...(await exportJWK(jwtKeys.publicKey)), kid: 'fake-jwks-1', alg: 'RS256', use: 'sig' };
  let rotations = 1;
  const certPem = readFileSync(new URL('test-chat-signer.cert.pem', FIXTURES), 'utf8');
  const certKey = await importPKCS8(readFileSync(new URL('test-chat-signer.key.pem', FIXTURES), 'utf8'), 'RS256');
  const account = await generateKeyPair('RS256', { extractable: true });
  const accountEmail = 'revintel-chat@revintel-test.iam.gserviceaccount.com';
  const dir = tempDir('revintel-fake-google-');
  const serviceAccountFile = join(dir, 'service-account.json');

  const calls: GoogleCall[] = [];
  const scripts = new Map<GoogleCall['endpoint'], GoogleScripted[]>();
  const issued = new Set<string>();
  /** requestId → the message it created. */
  const created = new Map<string, { name: string; body: Record<string, any> }>();
  let messages = 0;
  let tokens = 0;
  let base = '';

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url);
      const query = Object.fromEntries(url.searchParams);
      const auth = request.headers.get('authorization');
      const text = await request.text();
      let body: Record<string, any> = {};
      try {
        body = request.headers.get('content-type')?.includes('json') ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text));
      } catch {
        body = {};
      }
      const endpoint: GoogleCall['endpoint'] | null =
        url.pathname === '/oauth2/v3/certs'
          ? 'jwks'
          : url.pathname === '/x509/chat'
            ? 'x509'
            : url.pathname === '/token'
              ? 'token'
              : request.method === 'PATCH'
                ? 'patch'
                : url.pathname.endsWith('/messages')
                  ? 'create'
                  : null;
      const reply = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        calls.push({
          endpoint: endpoint ?? 'create',
          method: request.method,
          path: url.pathname,
          query,
          token: auth?.replace(/^Bearer /, '') ?? null,
          body,
          answered: status,
        });
        return Response.json(payload, { status, headers });
      };
      if (!endpoint) return reply(404, { error: { code: 404, status: 'NOT_FOUND' } });
      const next = scripts.get(endpoint)?.shift();
      const scripted = (answer: GoogleScripted) =>
        reply(
          answer.status,
          { error: { code: answer.status, status: answer.status === 429 ? 'RESOURCE_EXHAUSTED' : 'UNAVAILABLE' } },
          answer.headers,
        );
      if (next?.delayMs) await Bun.sleep(next.delayMs);
      if (next && next.status !== 200 && !next.commit) return scripted(next);
      switch (endpoint) {
        case 'jwks':
          return reply(200, { keys: [jwk] }, { 'cache-control': 'public, max-age=3600' });
        case 'x509':
          return reply(200, { 'fake-x509-1': certPem }, { 'cache-control': 'public, max-age=3600' });
        case 'token': {
          if (body.grant_type !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return reply(400, { error: 'unsupported_grant_type' });
          try {
            const { payload } = await jwtVerify(String(body.assertion ?? ''), account.publicKey, {
              algorithms: ['RS256'],
              issuer: accountEmail,
              audience: `${base}/token`,
            });
            if (payload.scope !== 'https://www.googleapis.com/auth/chat.bot') return reply(400, { error: 'invalid_scope' });
          } catch {
            return reply(400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
          }
          const token = `ya29.fake-${++tokens}`;
          issued.add(token);
          return reply(200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
        }
        case 'create': {
          if (!auth || !issued.has(auth.replace(/^Bearer /, ''))) return reply(401, { error: { code: 401, status: 'UNAUTHENTICATED' } });
          const space = url.pathname.replace(/^\/v1\//, '').replace(/\/messages$/, '');
          const requestId = query.requestId ?? '';
          const known = requestId ? created.get(requestId) : undefined;
          if (known) return reply(200, { name: known.name, ...known.body });
          const message = { name: `${space}/messages/fake${++messages}.fake${messages}`, body };
          if (requestId) created.set(requestId, message);
          if (next && next.status !== 200) return scripted(next);
          return reply(200, { name: message.name, sender: { type: 'BOT' }, ...body });
        }
        case 'patch': {
          if (!auth || !issued.has(auth.replace(/^Bearer /, ''))) return reply(401, { error: { code: 401, status: 'UNAUTHENTICATED' } });
          return reply(200, { name: url.pathname.replace(/^\/v1\//, ''), ...body });
        }
      }
    },
  });
  base = `http://127.0.0.1:${server.port}`;
  writeFileSync(
    serviceAccountFile,
    JSON.stringify({
      type: 'service_account',
      project_id: 'revintel-test',
      private_key_id: 'fake-sa-1',
      private_key: await exportPKCS8(account.privateKey),
      client_email: accountEmail,
      token_uri: `${base}/token`,
    }),
  );

  /** A token as Google signs it: an ID token with the JWKS key, or (x509) the project-number JWT. */
  async function sign(
    claims: JWTPayload,
    options: { key?: 'jwks' | 'x509' | CryptoKey; kid?: string; expiresIn?: number; issuedAt?: number; alg?: string } = {},
  ) {
    const iat = options.issuedAt ?? Math.floor(Date.now() / 1000);
    const key = options.key === 'x509' ? certKey : options.key && typeof options.key === 'object' ? options.key : jwtKeys.privateKey;
    const kid = options.kid ?? (options.key === 'x509' ? 'fake-x509-1' : jwk.kid);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: options.alg ?? 'RS256', kid, typ: 'JWT' })
      .setIssuedAt(iat)
      .setExpirationTime(iat + (options.expiresIn ?? 3600))
      .sign(key);
  }

  return {
    base,
    apiBase: `${base}/v1`,
    tokenUrl: `${base}/token`,
    jwksUrl: `${base}/oauth2/v3/certs`,
    certsUrl: `${base}/x509/chat`,
    serviceAccountFile,
    calls,
    callsOf: (endpoint: GoogleCall['endpoint']) => calls.filter((c) => c.endpoint === endpoint),
    /** The messages created, by requestId. */
    created,
    script: (endpoint: GoogleCall['endpoint'], answers: GoogleScripted[]) => scripts.set(endpoint, [...answers]),
    sign,
    /** Google rotates its OAuth key: a new key under a new kid, the old one gone. */
    rotate: async () => {
      jwtKeys = await generateKeyPair('RS256', { extractable: true });
      jwk = { ...(await exportJWK(jwtKeys.publicKey)), kid: `fake-jwks-${++rotations}`, alg: 'RS256', use: 'sig' };
      return jwk.kid;
    },
    /** Another RSA key (a forger's). */
    otherKey: async () => (await generateKeyPair('RS256')).privateKey,
    stop: () => server.stop(true),
  };
}

export type FakeGoogle = Awaited<ReturnType<typeof fakeGoogle>>;
