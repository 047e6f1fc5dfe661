/** The warning a fallback to process memory logs: its cause is an identifier, or absent, never "undefined". */
import { describe, expect, it } from 'vitest';
import { SharedStateUnavailableError } from '@/lib/errors';
import { FallbackWarning } from '@/lib/shared-state/fallback';
import { loggedLines } from '../support/setup';

const warningLines = () => loggedLines().filter((line) => line.event === 'redis.fallback_to_memory');

describe('redis.fallback_to_memory', () => {
  it('names the failure by its identifiers, never its message', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:6379'), { code: 'ECONNREFUSED' });
    new FallbackWarning().note('rate_limiter', new SharedStateUnavailableError('incr', refused));
    expect(warningLines()).toEqual([expect.objectContaining({ level: 'warn', operation: 'incr', cause: 'Error:ECONNREFUSED' })]);
    expect(JSON.stringify(loggedLines())).not.toContain('10.1.2.3');
  });

  it('leaves the cause out when the failure has none (a client not connected)', () => {
    new FallbackWarning().note('rate_limiter', new SharedStateUnavailableError('connect'));
    const [line] = warningLines();
    expect(line).toMatchObject({ level: 'warn', operation: 'connect' });
    expect(line).not.toHaveProperty('cause');
  });
});
