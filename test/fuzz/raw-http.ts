// Raw HTTP/1.1 over a TCP socket: the bytes go out exactly as the fuzzer made them (no path
// normalisation, any Host or none, duplicate headers, chunked bodies), and the answer is parsed here
// (status line, headers, content-length or chunked body).
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: [string, string][];
  body: Buffer;
  ms: number;
}
export type RawResult = RawResponse | { error: 'timeout' | 'closed without an answer' | 'connection error'; detail?: string; ms: number };

export const header = (response: RawResponse, name: string) => response.headers.find(([n]) => n === name)?.[1];

/** A complete response at the start of `buf`, or null while more bytes are needed (`ended`: the peer closed). */
function parse(buf: Buffer, head: boolean, ended: boolean): Omit<RawResponse, 'ms'> | null {
  let start = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', start);
    if (end < 0) return null;
    const lines = buf.subarray(start, end).toString('latin1').split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const headers = lines.slice(1).map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as [string, string];
    });
    const bodyStart = end + 4;
    if (status >= 100 && status < 200) {
      start = bodyStart; // 100 Continue: the real answer follows
      continue;
    }
    const get = (name: string) => headers.find(([n]) => n === name)?.[1];
    if (head || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) };
    if (get('transfer-encoding')?.toLowerCase().includes('chunked')) {
      const parts: Buffer[] = [];
      let at = bodyStart;
      for (;;) {
        const eol = buf.indexOf('\r\n', at);
        if (eol < 0) return null;
        const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
        if (Number.isNaN(size)) return { status, headers, body: Buffer.concat(parts) };
        if (size === 0) return buf.indexOf('\r\n\r\n', eol) >= 0 || ended ? { status, headers, body: Buffer.concat(parts) } : null;
        if (buf.length < eol + 2 + size + 2) return null;
        parts.push(buf.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
    }
    const length = get('content-length');
    if (length !== undefined) {
      const n = Number(length);
      return buf.length - bodyStart >= n
        ? { status, headers, body: buf.subarray(bodyStart, bodyStart + n) }
        : ended
          ? { status, headers, body: buf.subarray(bodyStart) }
          : null;
    }
    return ended ? { status, headers, body: buf.subarray(bodyStart) } : null;
  }
}

/** Sends `bytes` on a new connection and reads one answer. */
export function rawRequest(port: number, bytes: Uint8Array, options: { head?: boolean; timeoutMs?: number } = {}): Promise<RawResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    let done = false;
    const socket = connect({ host: '127.0.0.1', port });
    const finish = (result: RawResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ error: 'timeout', ms: ms() }), options.timeoutMs ?? 10_000);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const parsed = parse(buf, options.head ?? false, false);
      if (parsed) finish({ ...parsed, ms: ms() });
    });
    const ended = () => {
      const parsed = buf.length ? parse(buf, options.head ?? false, true) : null;
      finish(parsed ? { ...parsed, ms: ms() } : { error: 'closed without an answer', ms: ms() });
    };
    socket.on('end', ended);
    socket.on('close', ended);
    socket.on('error', (error) => (buf.length ? ended() : finish({ error: 'connection error', detail: String(error), ms: ms() })));
  });
}
