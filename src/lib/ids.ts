import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random bytes drawn from the system a few kilobytes at a time: an id costs a slice of a pool
 * rather than a call into the system's generator each (ids are made for every webhook and ticket). */
let pool = Buffer.alloc(0);
let poolAt = 0;
function randomByte(): number {
  if (poolAt >= pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

/** `length` uniformly random base62 characters (rejection sampling keeps every character equally
 * likely, so a key of n characters carries n·log2(62) bits). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/** Record ids: a type prefix and 20 base62 characters (~119 bits). */
export const newId = (
  prefix:
    | 'org'
    | 'key'
    | 'ins'
    | 'cus'
    | 'ctr'
    | 'inv'
    | 'evt'
    | 'tkt'
    | 'tib'
    | 'job'
    | 'mdl'
    | 'bt'
    | 'fbt'
    | 'csm'
    | 'act'
    | 'ntf'
    | 'tsk'
    | 'note'
    | 'whe'
    | 'dlv'
    | 'msg'
    | 'chi'
    | 'chs'
    | 'che'
    | 'usr'
    | 'ses'
    | 'lnk',
) => `${prefix}_${randomBase62(20)}`;

/** Connector ids are in webhook URLs and are the only credential of a platform that can neither
 * sign nor add a header: 26 base62 characters, about 154 random bits. */
export const newConnectorId = () => `con_${randomBase62(26)}`;
