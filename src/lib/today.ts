/** The day derived values are computed for: today, in UTC, as YYYY-MM-DD. */
export const utcToday = () => new Date().toISOString().slice(0, 10);
