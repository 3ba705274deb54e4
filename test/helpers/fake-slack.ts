// A fake Slack Web API on a real port (Bun.serve, port 0), speaking Slack's protocol: JSON bodies
// with the bot token as a bearer, answers `{ ok, … }`; chat.postMessage (a DM's channel and a ts),
// chat.update, chat.postEphemeral, users.lookupByEmail, and response_url hooks under /hooks/. A
// script per method answers 429 with Retry-After, 5xx or `ok: false` before the normal answer.
export interface FakeCall {
  method: string;
  token: string | null;
  body: Record<string, any>;
  answered: number;
}

export interface Scripted {
  status?: number;
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
}

export function fakeSlack(options: { users?: Record<string, string> } = {}) {
  const calls: FakeCall[] = [];
  const scripts = new Map<string, Scripted[]>();
  const users = new Map(Object.entries(options.users ?? {}));
  let ts = 1_767_605_000;
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url);
      const method = url.pathname.startsWith('/hooks/') ? 'response_url' : url.pathname.replace(/^\/api\//, '');
      const auth = request.headers.get('authorization');
      let body: Record<string, any> = {};
      try {
        body = JSON.parse(await request.text());
      } catch {
        body = {};
      }
      const next = scripts.get(method)?.shift();
      const reply = (status: number, payload: Record<string, unknown> | string, headers: Record<string, string> = {}) => {
        calls.push({ method, token: auth ? auth.replace(/^Bearer /, '') : null, body, answered: status });
        return typeof payload === 'string' ? new Response(payload, { status, headers }) : Response.json(payload, { status, headers });
      };
      if (next) return reply(next.status ?? 200, next.body ?? { ok: false, error: 'scripted' }, next.headers);
      if (method === 'response_url') return reply(200, 'ok');
      if (!auth?.startsWith('Bearer xoxb-')) return reply(200, { ok: false, error: 'not_authed' });
      switch (method) {
        case 'chat.postMessage':
          ts += 1;
          return reply(200, {
            ok: true,
            channel: body.thread_ts ? body.channel : `D${String(body.channel).slice(1)}`,
            ts: `${ts}.000100`,
            message: { text: body.text },
          });
        case 'chat.update':
          return reply(200, { ok: true, channel: body.channel, ts: body.ts });
        case 'chat.postEphemeral':
          return reply(200, { ok: true, message_ts: `${ts}.000200` });
        case 'users.lookupByEmail': {
          const id = users.get(String(body.email));
          return reply(200, id ? { ok: true, user: { id, profile: { email: body.email } } } : { ok: false, error: 'users_not_found' });
        }
        default:
          return reply(200, { ok: false, error: 'unknown_method' });
      }
    },
  });
  return {
    base: `http://127.0.0.1:${server.port}/api`,
    hook: (id: string) => `http://127.0.0.1:${server.port}/hooks/${id}`,
    calls,
    callsOf: (method: string) => calls.filter((c) => c.method === method),
    script: (method: string, answers: Scripted[]) => scripts.set(method, [...answers]),
    addUser: (email: string, id: string) => users.set(email, id),
    stop: () => server.stop(true),
  };
}
