/**
 * vercel.json against the code: the schedules the issue asks for, and a
 * maxDuration that equals the routes' own and fits each unit of work's worst
 * case at the default upstream timeout (the arithmetic is in docs/operations.md).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { maxDuration as reconcileMaxDuration } from '@/app/api/cron/reconcile-payments/route';
import { maxDuration as shipmentsMaxDuration } from '@/app/api/cron/reconcile-shipments/route';
import { maxDuration as replayMaxDuration } from '@/app/api/cron/retry-shipping/route';
import { maxDuration as authorizationsMaxDuration } from '@/app/api/cron/capture-authorizations/route';
import { CRON_MAX_DURATION_SECONDS, CRON_SAFETY_MARGIN_MS, runBudget, worstCase } from '@/lib/cron/budget';

const vercel = JSON.parse(readFileSync(new URL('../../vercel.json', import.meta.url), 'utf8')) as {
  crons: { path: string; schedule: string }[];
  functions: Record<string, { maxDuration: number }>;
};
const DEFAULT_TIMEOUT_MS = 10_000;

describe('vercel.json', () => {
  it('schedules reconciliation every 15 minutes, the shipping replay every 5 and shipment reconciliation hourly', () => {
    expect(vercel.crons).toEqual(
      expect.arrayContaining([
        { path: '/api/cron/reconcile-payments', schedule: '*/15 * * * *' },
        { path: '/api/cron/retry-shipping', schedule: '*/5 * * * *' },
        // Hourly: an authorization past its age is acted on within the hour, long before its 7 days end.
        { path: '/api/cron/capture-authorizations', schedule: '0 * * * *' },
        // Off the other runs' minutes: each pass rereads the window from ShipStation, whose budget the replay shares.
        { path: '/api/cron/reconcile-shipments', schedule: '7 * * * *' },
      ]),
    );
  });

  it("gives each cron function the maxDuration its route and budget assume", () => {
    expect(vercel.functions['app/api/cron/reconcile-payments/route.ts']?.maxDuration).toBe(CRON_MAX_DURATION_SECONDS);
    expect(vercel.functions['app/api/cron/retry-shipping/route.ts']?.maxDuration).toBe(CRON_MAX_DURATION_SECONDS);
    expect(reconcileMaxDuration).toBe(CRON_MAX_DURATION_SECONDS);
    expect(replayMaxDuration).toBe(CRON_MAX_DURATION_SECONDS);
    expect(vercel.functions['app/api/cron/capture-authorizations/route.ts']?.maxDuration).toBe(CRON_MAX_DURATION_SECONDS);
    expect(authorizationsMaxDuration).toBe(CRON_MAX_DURATION_SECONDS);
    expect(vercel.functions['app/api/cron/reconcile-shipments/route.ts']?.maxDuration).toBe(CRON_MAX_DURATION_SECONDS);
    expect(shipmentsMaxDuration).toBe(CRON_MAX_DURATION_SECONDS);
  });

  it('leaves room at the default timeout for a page and an event, and for a whole ShipStation batch', () => {
    const usable = CRON_MAX_DURATION_SECONDS * 1000 - CRON_SAFETY_MARGIN_MS;
    expect(worstCase.eventPage(DEFAULT_TIMEOUT_MS) + worstCase.cardEvent(DEFAULT_TIMEOUT_MS)).toBeLessThanOrEqual(usable);
    expect(worstCase.shipStationBatch(DEFAULT_TIMEOUT_MS) + worstCase.shipment(DEFAULT_TIMEOUT_MS)).toBeLessThanOrEqual(usable);
  });
});

describe('run budget', () => {
  it('admits a unit of work only while its worst case ends before the limit minus the margin', () => {
    let now = 0;
    const budget = runBudget(60_000, () => now);
    expect(budget.fits(60_000 - CRON_SAFETY_MARGIN_MS)).toBe(true);
    expect(budget.fits(60_000 - CRON_SAFETY_MARGIN_MS + 1)).toBe(false);
    now = 30_000;
    expect(budget.fits(25_000)).toBe(true);
    expect(budget.fits(25_001)).toBe(false);
  });
});
