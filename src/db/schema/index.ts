export * from './organisations.ts';
export * from './api-keys.ts';
export * from './audit-log.ts';
export * from './rate-limits.ts';
export * from './instances.ts';
export * from './customers.ts';
export * from './contracts.ts';
export * from './invoices.ts';
