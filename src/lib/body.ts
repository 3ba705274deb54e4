import { AppError } from './errors.ts';

export const tooLarge = (limit: number) => new AppError('payload_too_large', `Request body is larger than the limit of ${limit} bytes`);

/** Reads the body as it streams in and stops at `limit` bytes: a chunked upload that declares no
 * length is refused as soon as it goes over, not after it has been buffered whole. */
export async function readBodyLimited(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limit) throw tooLarge(limit);
  // A declared length within the limit bounds the body (the server reads no more than it): read it
  // whole, without a stream reader's promise per chunk (a webhook's most common shape).
  if (Number.isInteger(declared)) return new Uint8Array(await request.arrayBuffer());
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

export const isJsonContentType = (contentType: string | null) =>
  !!contentType && /^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(contentType.trim());
