// A proven body checked against the TypeBox schema of its platform and kind, so that handlers read
// typed fields instead of guessing at `any`. Schemas name only the fields we read and leave the
// rest open: platforms add fields without notice, and an event we do not act on is still stored.
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { AppError } from '../../lib/errors.ts';
import { describeSchemaError, type SchemaError } from '../../lib/validation.ts';

/** A compiled check of `schema`: the value typed, or the 400 naming its first wrong field. */
export function payloadCheck<T extends TSchema>(schema: T, what: string): (value: unknown) => Static<T> {
  const compiled = TypeCompiler.Compile(schema);
  return (value) => {
    if (compiled.Check(value)) return value;
    const first = compiled.Errors(value).First() as SchemaError | undefined;
    throw new AppError('validation_failed', `${describeSchemaError(first, 'field', what)} (${what})`);
  };
}

/** A JSON object: what every platform's body is, before its kind is known. */
export type JsonObject = Record<string, unknown>;

export const isJsonObject = (value: unknown): value is JsonObject => !!value && typeof value === 'object' && !Array.isArray(value);
