// Secrets kept at rest as their SHA-256 (API keys, session and link tokens, connector tokens), and
// secrets compared in constant time: one place for both, so no caller compares with `===`.
import { createHash, timingSafeEqual } from 'node:crypto';

export const sha256Hex = (text: string): string => Bun.SHA256.hash(text, 'hex') as string;

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** Whether two secrets are equal, in a time that depends neither on where they differ nor on their
 * lengths (both are hashed first). */
export const sameSecret = (a: string, b: string): boolean => timingSafeEqual(sha256(a), sha256(b));
