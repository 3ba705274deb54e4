// The configuration: defaults a newcomer needs nothing for, flags over environment, and errors that
// name the variable.
import { describe, expect, test } from 'bun:test';
import { ConfigError, loadConfig } from '../src/config.ts';

const failure = (env: Record<string, string>, flags = {}) => {
  try {
    loadConfig(env, flags);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
};

describe('config', () => {
  test('defaults: embedded database in ./data, memory limiter, port 3000', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: null,
      dataDir: './data',
      rateLimitStore: 'memory',
      reusePort: false,
      logLevel: 'info',
    });
    expect(config.bodyLimitApi).toBe(1024 * 1024);
  });

  test('the store follows the database, unless chosen', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://db/x' }).rateLimitStore).toBe('postgres');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/x', REDIS_URL: 'redis://r:6379' }).rateLimitStore).toBe('redis');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/x', RATE_LIMIT_STORE: 'memory' }).rateLimitStore).toBe('memory');
  });

  test('flags win over the environment', () => {
    expect(loadConfig({ PORT: '3000' }, { PORT: '4000' }).port).toBe(4000);
  });

  test('bad values name the variable', () => {
    expect(failure({ PORT: 'abc' }).message).toBe('PORT must be an integer between 0 and 65535, got "abc"');
    expect(failure({ PORT: '70000' }).variable).toBe('PORT');
    expect(failure({ DATABASE_URL: 'not a url' }).message).toStartWith('DATABASE_URL must be a URL');
    expect(failure({ REDIS_URL: 'http://r' }).message).toContain('REDIS_URL must be a URL starting with redis:');
    expect(failure({ RATE_LIMIT_STORE: 'postgres' }).message).toContain('DATABASE_URL is not set');
    expect(failure({ REUSE_PORT: 'maybe' }).message).toBe('REUSE_PORT must be true or false, got "maybe"');
    expect(failure({ SECRET_KEY: 'short' }).message).toContain('SECRET_KEY must be at least 32 characters');
    expect(failure({ TRUST_PROXY: 'the cloud' }).variable).toBe('TRUST_PROXY');
    expect(failure({ DATABASE_URL: 'postgres://db/x', REUSE_PORT: 'true', RATE_LIMIT_STORE: 'memory' }).message).toContain(
      'shared rate-limit store',
    );
  });

  test('TRUST_PROXY: off, all, or a list of proxies', () => {
    expect(loadConfig({}).trustProxy).toEqual({ mode: 'off' });
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toEqual({ mode: 'all' });
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.0.0.2' }).trustProxy).toEqual({ mode: 'list', addresses: ['10.0.0.1', '10.0.0.2'] });
  });
});
