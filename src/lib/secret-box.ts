// Webhook secrets at rest: sealed with AES-256-GCM under a key derived from SECRET_KEY,
// so a copy of the database alone does not let anyone sign webhooks. The connector id is bound as
// associated data: a sealed secret moved to another connector's row does not open.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/** SECRET_KEY is operator text of any length ≥ 32: hashed to the 256-bit AES key. */
const aesKey = (secretKey: string) => createHash('sha256').update(`revintel secret-box ${VERSION}\0${secretKey}`).digest();

export function sealSecret(plaintext: string, secretKey: string, boundTo: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', aesKey(secretKey), iv);
  cipher.setAAD(Buffer.from(boundTo));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/** The plaintext, or a SecretBoxError when the key is not the one that sealed it (or the text was
 * altered). */
export function openSecret(sealed: string, secretKey: string, boundTo: string): string {
  const [version, iv, body, tag] = sealed.split('.');
  if (version !== VERSION || !iv || !body || !tag) throw new SecretBoxError('not a sealed secret of this version');
  try {
    const decipher = createDecipheriv('aes-256-gcm', aesKey(secretKey), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretBoxError('the secret does not open with this SECRET_KEY');
  }
}
