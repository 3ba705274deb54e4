// Reading a database error's SQLSTATE, from either driver, and the one judgement both queues make of
// it: whether the database refuses the data itself, so that the same write fails the same way on
// every attempt and retrying cannot help.

// SQLSTATE class 22, data exception (22P05 unsupported Unicode escape, 22021 invalid byte sequence,
// 22P02 invalid text, 22003 number out of range, 22007/22008 bad date or time…), and 23514, a check
// constraint refusing a value.
const REFUSED_DATA = /^(?:22[0-9A-Z]{3}|23514)$/;
// What a SQLSTATE looks like (its classes), unlike the drivers' own codes (ECONNREFUSED, EPIPE,
// CONNECTION_CLOSED).
const SQLSTATE = /^(?:\d\d|F0|HV|P0|XX)[0-9A-Z]{3}$/;

/** A database error's SQLSTATE, from either driver, after a thread crossing (RemoteUnitError keeps
 * `code`) or wrapped once (drizzle puts the driver's error in `cause`). */
export function sqlStateOf(error: unknown): string | undefined {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: { code?: unknown } | null };
  const found = typeof code === 'string' ? code : cause?.code;
  return typeof found === 'string' && SQLSTATE.test(found) ? found : undefined;
}

/** Whether the database refused the data itself (a data exception or a check constraint). */
export function isRefusedData(error: unknown): boolean {
  const sqlState = sqlStateOf(error);
  return sqlState !== undefined && REFUSED_DATA.test(sqlState);
}
