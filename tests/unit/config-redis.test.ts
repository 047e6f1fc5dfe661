import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/lib/config';
import { COMPLETE_PRODUCTION_ENV } from '../support/production-env';

const { REDIS_URL: _redisUrl, ...production } = COMPLETE_PRODUCTION_ENV;
const PER_INSTANCE = /REDIS_URL is not set: .*per instance/;

describe('shared state configuration', () => {
  it('warns at start in production without REDIS_URL that state is per instance', () => {
    expect(parseConfig(production).warnings.join('\n')).toMatch(PER_INSTANCE);
  });

  it('does not warn in production with REDIS_URL, nor in development or tests without it', () => {
    expect(parseConfig({ ...production, REDIS_URL: 'redis://127.0.0.1:6379' }).warnings).toEqual([]);
    expect(parseConfig({ NODE_ENV: 'development' }).warnings.join('\n')).not.toMatch(/REDIS_URL/);
    expect(parseConfig({ NODE_ENV: 'test' }).warnings.join('\n')).not.toMatch(/REDIS_URL/);
  });

  it('reads REDIS_TIMEOUT_MS, 500 ms by default, and refuses a bad one by name only', () => {
    expect(parseConfig({ NODE_ENV: 'test' }).redisTimeoutMs).toBe(500);
    expect(parseConfig({ NODE_ENV: 'test', REDIS_TIMEOUT_MS: '1500' }).redisTimeoutMs).toBe(1500);
    expect(() => parseConfig({ NODE_ENV: 'test', REDIS_TIMEOUT_MS: 'soon' })).toThrow(/REDIS_TIMEOUT_MS/);
    expect(() => parseConfig({ NODE_ENV: 'test', REDIS_TIMEOUT_MS: '0' })).toThrow(/REDIS_TIMEOUT_MS/);
  });

  it('accepts redis:// and rediss:// only, never printing the URL', () => {
    expect(parseConfig({ NODE_ENV: 'test', REDIS_URL: 'rediss://default:pw@eu1-x.upstash.io:6379' }).redisUrl).toMatch(/^rediss:/);
    let message = '';
    try {
      parseConfig({ NODE_ENV: 'test', REDIS_URL: 'http://user:hunter2@redis.example.com' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('REDIS_URL');
    expect(message).not.toContain('hunter2');
  });
});
