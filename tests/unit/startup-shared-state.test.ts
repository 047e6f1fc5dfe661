import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigurationAtStart } from '@/lib/startup';
import { useTestEnv } from '../support/env';
import { loggedLines } from '../support/setup';

const PRODUCTION = {
  NODE_ENV: 'production',
  ALLOWED_ORIGINS: 'https://storefront.test',
  SHIPPING_WEBHOOK_SECRET: 'shipping-secret-0123456789',
};

function startWarnings(): string[] {
  return loggedLines()
    .filter((line) => line.event === 'config.warning')
    .map((line) => String(line.message));
}

afterEach(() => useTestEnv());

describe('start-up warning about per-instance state', () => {
  it('production without REDIS_URL warns that state is per instance', () => {
    useTestEnv(PRODUCTION);
    validateConfigurationAtStart();
    // One warning for the one missing setting, naming both costs: state per instance, and a replay queue and cursor that are not durable.
    const redisWarnings = startWarnings().filter((m) => m.includes('REDIS_URL is not set'));
    expect(redisWarnings).toHaveLength(1);
    expect(redisWarnings[0]).toContain('kept per instance');
    expect(redisWarnings[0]).toMatch(/shipping replay queue and the reconciliation cursor .*not durable/);
    expect(loggedLines().find((line) => line.event === 'service.started')).toMatchObject({ sharedState: 'memory' });
  });

  it('production with REDIS_URL does not, and the URL is never logged', () => {
    useTestEnv({ ...PRODUCTION, REDIS_URL: 'rediss://default:hunter2-password@shared.example.com:6379' });
    validateConfigurationAtStart();
    expect(startWarnings().join('\n')).not.toContain('REDIS_URL');
    expect(loggedLines().find((line) => line.event === 'service.started')).toMatchObject({ sharedState: 'redis' });
    expect(JSON.stringify(loggedLines())).not.toContain('hunter2');
  });

  it('development and tests without REDIS_URL do not warn', () => {
    useTestEnv({ NODE_ENV: 'development' });
    validateConfigurationAtStart();
    useTestEnv();
    validateConfigurationAtStart();
    expect(startWarnings().join('\n')).not.toContain('REDIS_URL');
  });
});
