/**
 * Comparing a presented secret with the configured one (the cron bearer
 * token, the shipping webhook's secret): both sides are hashed first, so the
 * comparison takes the same time whatever the length or content of the guess.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

export function secretMatches(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
