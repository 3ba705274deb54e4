// How long the old webhook secret keeps working after a rotation unless the caller says otherwise:
// the API, the CLI and the console's form all start from this one value. Kept apart from the
// service so the console's browser bundle can import it without the database code.
export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 3600;
