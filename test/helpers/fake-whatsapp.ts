// A fake WhatsApp Cloud API (Meta's Graph API) on a real port (Bun.serve, port 0), speaking its
// protocol: `POST /{phone_number_id}/messages` with the access token as a bearer answers
// `{messaging_product, contacts: [{input, wa_id}], messages: [{id: "wamid.…"}]}`; errors as Meta
// answers them, `{error: {message, type, code, error_data, fbtrace_id}}`; a body beyond Meta's
// limits (3 buttons, titles of 20, an interactive body of 1,024, a text of 4,096) is a 131009. A script answers the next
// sends with 131047 (window closed), 130429 or 429 (throttled, with Retry-After) or 5xx first.
export interface FakeSend {
  phoneNumberId: string;
  token: string | null;
  body: Record<string, any>;
  answered: number;
  /** The wamid answered (null when it was an error). */
  wamid: string | null;
}

export interface Scripted {
  status: number;
  code?: number;
  headers?: Record<string, string>;
}

export const metaError = (code: number, message: string) => ({
  error: {
    message,
    type: 'OAuthException',
    code,
    error_data: { messaging_product: 'whatsapp', details: message },
    fbtrace_id: 'AbCdEfGhIjK',
  },
});

/** What Meta refuses with error 100 / 131009: the shape and limits of a `messages` body. */
function refusal(body: Record<string, any>): string | null {
  if (body.messaging_product !== 'whatsapp') return 'messaging_product must be whatsapp';
  if (typeof body.to !== 'string' || !/^[1-9][0-9]{6,14}$/.test(body.to)) return 'to must be a phone number without +';
  if (body.type === 'text')
    return typeof body.text?.body === 'string' && body.text.body.length > 0 && body.text.body.length <= 4096
      ? null
      : 'text.body must be 1-4096 characters';
  if (body.type === 'interactive') {
    const buttons = body.interactive?.action?.buttons;
    if (body.interactive?.type !== 'button' || !Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3)
      return 'interactive buttons: 1 to 3';
    if ([...String(body.interactive.body?.text ?? '')].length > 1024) return 'interactive body over 1024 characters';
    if (
      buttons.some(
        (b: any) => b.type !== 'reply' || [...String(b.reply?.title ?? '')].length > 20 || String(b.reply?.id ?? '').length > 256,
      )
    )
      return 'button title over 20 characters or id over 256';
    return null;
  }
  if (body.type === 'template')
    return typeof body.template?.name === 'string' && typeof body.template?.language?.code === 'string'
      ? null
      : 'template name and language are required';
  return `type ${String(body.type)} is not supported`;
}

export function fakeWhatsApp() {
  const sends: FakeSend[] = [];
  const script: Scripted[] = [];
  let counter = 0;
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url);
      const match = /^\/v21\.0\/([0-9]+)\/messages$/.exec(url.pathname);
      if (request.method !== 'POST' || !match) return Response.json(metaError(100, 'Unsupported request'), { status: 400 });
      const auth = request.headers.get('authorization');
      let body: Record<string, any> = {};
      try {
        body = JSON.parse(await request.text());
      } catch {
        body = {};
      }
      const record = (answered: number, wamid: string | null) =>
        sends.push({ phoneNumberId: match[1]!, token: auth ? auth.replace(/^Bearer /, '') : null, body, answered, wamid });
      if (!auth?.startsWith('Bearer ')) {
        record(401, null);
        return Response.json(metaError(190, 'Invalid OAuth access token'), { status: 401 });
      }
      const refused = refusal(body);
      if (refused) {
        record(400, null);
        return Response.json(metaError(131009, `Parameter value is not valid: ${refused}`), { status: 400 });
      }
      const next = script.shift();
      if (next) {
        record(next.status, null);
        const message =
          next.code === 131047 ? 'Re-engagement message' : next.code === 130429 ? 'Rate limit hit' : 'Service temporarily unavailable';
        return Response.json(metaError(next.code ?? 2, message), { status: next.status, headers: next.headers });
      }
      counter += 1;
      const wamid = `wamid.FAKE${String(counter).padStart(6, '0')}${Math.random().toString(36).slice(2, 10).toUpperCase()}`;
      record(200, wamid);
      return Response.json({
        messaging_product: 'whatsapp',
        contacts: [{ input: String(body.to), wa_id: String(body.to) }],
        messages: [{ id: wamid }],
      });
    },
  });
  return {
    base: `http://127.0.0.1:${server.port}/v21.0`,
    sends,
    /** The sends to `to`, in order. */
    to: (to: string) => sends.filter((s) => s.body.to === to),
    /** Answers the next sends with these, in order, before answering normally again. */
    script: (answers: Scripted[]) => script.push(...answers),
    stop: () => server.stop(true),
  };
}
