import { describe, expect, it } from 'vitest';
import { clientIp } from '@/lib/http/client-ip';
import { nextClientIp } from '@/scripts/bench/flows';

describe('the bench client addresses', () => {
  it('are distinct clients to the service, which keys IPv6 by its /64', () => {
    const keys = new Set<string>();
    for (let i = 0; i < 70_000; i += 1) {
      keys.add(clientIp(new Headers({ 'x-forwarded-for': nextClientIp() }), 1));
    }
    expect(keys.size).toBe(70_000);
  });
});
