// The field types the ARR records share (docs/arr-data.md), for the bodies of POST and PATCH and for
// the rows of `revintel import`: one definition of what a currency, an amount or a date is.
import { Type as t, type TSchema } from '@sinclair/typebox';
import { Type, type TLiteral } from '@sinclair/typebox';
import './formats.ts';

export const nullable = <T extends TSchema>(schema: T) => t.Union([schema, t.Null()]);

export const externalId = t.String({ minLength: 1, maxLength: 255 });
export const currency = t.String({ pattern: '^[A-Z]{3}$', error: 'must be an ISO 4217 currency code such as USD' });
/** Minor units (cents), never negative, exact in a JavaScript number. TypeBox's Integer, not
 * Elysia's (which also takes "4900" as text and skips the bounds once it has converted it). */
export const money = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  error: 'must be a whole, non-negative amount in minor units (cents)',
});
export const day = t.String({ format: 'calendar-day', error: 'must be a date, YYYY-MM-DD' });
export const instant = t.String({
  format: 'instant',
  error: 'must be an ISO 8601 time with a zone (up to ±15:59), e.g. 2026-01-31T12:00:00Z',
});
export const metadata = t.Record(t.String(), t.Unknown(), { error: 'must be a JSON object' });
export const email = t.String({ format: 'email', maxLength: 320, error: 'must be an e-mail address' });
export const label = (max = 300) => t.String({ minLength: 1, maxLength: max });
// Each literal typed as the union of the values, so the schema's static type is that union, not `string`.
export const enumOf = <const V extends readonly string[]>(values: V) => t.Union(values.map((v): TLiteral<V[number]> => t.Literal(v)));
export const count = (max: number) => Type.Integer({ minimum: 0, maximum: max, error: `must be a whole number from 0 to ${max}` });
