// How a value that breaks its TypeBox schema is described to the client: one sentence naming the
// field the way the client wrote it (`csm.email`, not `/csm/email`). The API's validation errors
// (plugins/errors.ts) and the import's rejected rows (modules/imports) say it the same way.
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { AppError } from './errors.ts';

export interface SchemaError {
  path?: string;
  value?: unknown;
  /** A union's errors, one iterator per member. */
  errors?: { First(): SchemaError | undefined }[];
  message?: string;
  summary?: string;
  schema?: { anyOf?: { const?: unknown; error?: unknown; type?: unknown }[]; error?: unknown };
}

export type Where = 'field' | 'query parameter' | 'path parameter' | 'header';

/** A nullable field's value that is not null failed as its non-null member: say why, at depth
 * (`csm.email`, not "csm must be an object or null"). */
function throughNullable(error: SchemaError): SchemaError {
  if (error.value === null || !error.errors || error.errors.length !== 2) return error;
  const members = error.errors.map((iterator) => iterator.First());
  const inner = members.find((member) => member?.schema && (member.schema as { type?: unknown }).type !== 'null');
  return inner && (inner.path ?? '') !== (error.path ?? '') ? throughNullable(inner) : error;
}

export function describeSchemaError(error: SchemaError | undefined, where: Where, fallback = 'request'): string {
  if (!error) return `Invalid ${fallback}`;
  const first = throughNullable(error);
  const choices = first.schema?.anyOf?.map((option) => option.const);
  let rule = (first.message ?? first.summary ?? 'is invalid').replace(/^Expected/, 'expected');
  if (choices?.length && choices.every((c) => typeof c === 'string')) rule = `must be one of ${choices.join(', ')}`;
  // A schema may carry its own wording (`error: 'must be …'`) where TypeBox's would show a regex;
  // a nullable field (a union with null) speaks with its non-null member's.
  const own = first.schema?.error ?? first.schema?.anyOf?.find((option) => typeof option.error === 'string')?.error;
  if (typeof own === 'string') rule = own;
  else if (rule === 'expected union value' && first.schema?.anyOf?.every((o) => typeof o.type === 'string')) {
    rule = `must be ${first.schema.anyOf.map((o) => (o.type === 'null' ? 'null' : `a ${o.type}`)).join(' or ')}`;
  }
  if (rule === 'expected required property') rule = 'is required';
  if (rule === 'Unexpected property') rule = 'is not a known field';
  const field = (first.path ?? '').replace(/^\//, '').replaceAll('/', '.');
  return field ? `Invalid ${where} "${field}": ${rule}` : `Invalid ${fallback}: ${rule}`;
}

/** A compiled check of `schema`: null when the value is valid, else the first error described. */
export function validator(schema: TSchema): (value: unknown) => string | null {
  const compiled = TypeCompiler.Compile(schema);
  return (value) => {
    if (compiled.Check(value)) return null;
    return describeSchemaError(compiled.Errors(value).First() as SchemaError | undefined, 'field', 'record');
  };
}

/**
 * A request body checked by hand (read with its size limit first, so Elysia does not parse it): the
 * body as its schema's type, or a 400 `validation_failed` naming the field.
 */
export function requestBody<T extends TSchema>(schema: T): (value: unknown) => Static<T> {
  const check = validator(schema);
  return (value) => {
    const problem = check(value);
    if (problem) throw new AppError('validation_failed', problem.replace('Invalid record', 'Invalid request body'));
    return value as Static<T>;
  };
}
