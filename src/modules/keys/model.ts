import { t } from 'elysia';

export const CreateKeyBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 200 }),
    expires_at: t.Optional(t.Nullable(t.String({ format: 'date-time' }))),
  },
  { additionalProperties: false },
);
export type CreateKeyBody = typeof CreateKeyBody.static;

export const KeyIdParams = t.Object({ id: t.String({ pattern: '^key_[0-9A-Za-z]{1,64}$' }) });
